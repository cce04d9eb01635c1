"""ctypes mirrors of the structs and callback types of include/baton.h.

Field order and types follow baton.h exactly; tests/test_layout.py compiles
a small C program against the header and compares every size and offset,
so a change to the header cannot go unnoticed.
"""

from __future__ import annotations

import ctypes
from ctypes import (
    Structure,
    c_char,
    c_char_p,
    c_int,
    c_int64,
    c_size_t,
    c_uint,
    c_uint8,
    c_uint32,
    c_uint64,
    c_void_p,
)

# Sizes fixed by baton.h.
NAME_MAX = 255  # lock names: 1..255 bytes
CLIENT_NAME_MAX = 64  # struct baton_options' client_name
SECRET_SIZE = 16  # BATON_SECRET_SIZE
MULTI_MAX = 16  # BATON_MULTI_MAX
STATUS_MAX_MEMBERS = 16  # struct baton_status' members[]
VALUE_MAX = 255  # BATON_VALUE_MAX: a grant's value
WATCH_PREFIX = 1  # BATON_WATCH_PREFIX, a flag of baton_watch_open()

# void (*on_session)(baton_client *c, int state, void *data)
SESSION_CB = ctypes.CFUNCTYPE(None, c_void_p, c_int, c_void_p)
# void (*on_lock_lost)(baton_client *c, const char *name, uint64_t token,
#                      void *data)
LOCK_LOST_CB = ctypes.CFUNCTYPE(None, c_void_p, c_char_p, c_uint64, c_void_p)
# int (*baton_health_fn)(baton_client *c, void *data)
HEALTH_CB = ctypes.CFUNCTYPE(ctypes.c_int, c_void_p, c_void_p)


class Options(Structure):
    """struct baton_options."""

    _fields_ = [
        ("ttl_ms", c_uint32),
        ("request_timeout_ms", c_uint32),
        ("client_name", c_char_p),
        ("on_session", SESSION_CB),
        ("on_lock_lost", LOCK_LOST_CB),
        ("data", c_void_p),
        ("tls_ca", c_char_p),
        ("tls_cert", c_char_p),
        ("tls_key", c_char_p),
        ("lock_delay_ms", c_uint32),
    ]


# baton_options_init() writes the whole struct as the library knows it. A
# newer libbaton may have appended fields, so the options live in a buffer
# this much larger than our mirror: the init can never write past it.
OPTIONS_SLACK = 512


class Holder(Structure):
    """struct baton_holder."""

    _fields_ = [
        ("held", c_int),
        ("session", c_uint64),
        ("owner", c_uint64),
        ("token", c_uint64),
        ("count", c_uint32),
        ("waiters", c_uint32),
        ("index", c_uint64),
        ("client_name", c_char * (CLIENT_NAME_MAX + 1)),
    ]


class LockInfo(Structure):
    """struct baton_lock_info."""

    _fields_ = [
        ("name", c_char * (NAME_MAX + 1)),
        ("session", c_uint64),
        ("owner", c_uint64),
        ("token", c_uint64),
        ("count", c_uint32),
        ("waiters", c_uint32),
        ("client_name", c_char * (CLIENT_NAME_MAX + 1)),
    ]


class Grant(Structure):
    """struct baton_grant."""

    _fields_ = [
        ("session", c_uint64),
        ("owner", c_uint64),
        ("token", c_uint64),
        ("count", c_uint32),
        ("mode", c_int),
        ("permits", c_uint32),
        ("limit", c_uint32),
        ("waiters", c_uint32),
        ("client_name", c_char * (CLIENT_NAME_MAX + 1)),
        ("granted_s", c_uint32),
    ]


class LockValue(Structure):
    """struct baton_lock_value."""

    _fields_ = [
        ("lock", LockInfo),
        ("value", c_char * (VALUE_MAX + 1)),
    ]


class GrantValue(Structure):
    """struct baton_grant_value."""

    _fields_ = [
        ("grant", Grant),
        ("value", c_char * (VALUE_MAX + 1)),
    ]


class AcquireOptions(Structure):
    """struct baton_acquire_options."""

    _fields_ = [
        ("mode", c_int),
        ("limit", c_uint32),
        ("permits", c_uint32),
        ("value", c_char_p),
        ("hold_ms", c_uint32),
        ("reserved32", c_uint32),
        ("reserved", c_uint64 * 3),
    ]


class Member(Structure):
    """struct baton_member."""

    _fields_ = [
        ("id", c_uint64),
        ("role", c_int),
        ("raft_address", c_char * 65),
        ("client_address", c_char * 65),
    ]


class BackupInfo(Structure):
    """struct baton_backup_info."""

    _fields_ = [
        ("index", c_uint64),
        ("term", c_uint64),
        ("made_ms", c_uint64),
        ("size", c_uint64),
        ("sessions", c_uint64),
        ("locks", c_uint64),
        ("grants", c_uint64),
        ("waiters", c_uint64),
    ]


class Status(Structure):
    """struct baton_status."""

    _fields_ = [
        ("endpoint", c_char * 65),
        ("id", c_uint64),
        ("role", c_int),
        ("term", c_uint64),
        ("leader_id", c_uint64),
        ("commit_index", c_uint64),
        ("applied_index", c_uint64),
        ("last_index", c_uint64),
        ("sessions", c_uint64),
        ("locks", c_uint64),
        ("waiters", c_uint64),
        ("n_members", c_uint),
        ("members", Member * STATUS_MAX_MEMBERS),
    ]


class NodeVersion(Structure):
    """struct baton_node_version."""

    _fields_ = [
        ("release", c_char * 33),
        ("protocol", c_uint),
        ("command", c_uint),
        ("snapshot", c_uint),
        ("container", c_uint),
    ]


ALARM_DIVERGED = 0x1


class NodeAlarms(Structure):
    """struct baton_node_alarms."""

    _fields_ = [
        ("known", c_int),
        ("alarms", c_uint),
        ("diverged_index", c_uint64),
        ("digest", c_uint64),
        ("leader_digest", c_uint64),
    ]


class LockName(Structure):
    """struct baton_lock_name."""

    _fields_ = [("name", c_char_p), ("mode", c_int)]


class Leader(Structure):
    """struct baton_leader."""

    _fields_ = [
        ("held", c_int),
        ("session", c_uint64),
        ("owner", c_uint64),
        ("token", c_uint64),
        ("candidates", c_uint32),
        ("since_s", c_uint32),
        ("client_name", c_char * (CLIENT_NAME_MAX + 1)),
        ("value", c_char * (VALUE_MAX + 1)),
    ]


class Event(Structure):
    """struct baton_event."""

    _fields_ = [
        ("kind", c_int),
        ("cause", c_int),
        ("index", c_uint64),
        ("ord", c_uint32),
        ("session", c_uint64),
        ("owner", c_uint64),
        ("token", c_uint64),
        ("mode", c_int),
        ("permits", c_uint32),
        ("name", c_char * (NAME_MAX + 1)),
        ("value", c_char * (VALUE_MAX + 1)),
    ]


# void (*baton_watch_cb)(void *data, const struct baton_event *ev, int status)
WATCH_CB = ctypes.CFUNCTYPE(None, c_void_p, ctypes.POINTER(Event), c_int)


class Fence(Structure):
    """struct baton_fence."""

    _fields_ = [("highest", c_uint64)]


Secret = c_uint8 * SECRET_SIZE

ACL_IDENTITY_MAX = 255  # BATON_ACL_IDENTITY_MAX
ADDRESS_MAX = 64  # struct baton_session's address


class AclRule(Structure):
    """struct baton_acl_rule."""

    _fields_ = [
        ("identity", c_char * (ACL_IDENTITY_MAX + 1)),
        ("role", c_int),
    ]


ACL_PREFIX_MAX = 255  # BATON_ACL_PREFIX_MAX


class AclPrefixRule(Structure):
    """struct baton_acl_prefix_rule."""

    _fields_ = [
        ("subject", c_char * (ACL_IDENTITY_MAX + 1)),
        ("group", c_int),
        ("prefix", c_char * (ACL_PREFIX_MAX + 1)),
        ("perms", c_int),
    ]


class Acl(Structure):
    """struct baton_acl."""

    _fields_ = [
        ("seeded", c_int),
        ("default_role", c_int),
        ("n_rules", c_uint),
        ("rules", ctypes.POINTER(AclRule)),
    ]


class Rules(Structure):
    """struct baton_rules (baton_rule_list(); struct baton_acl keeps the
    layout it had before the rules on names)."""

    _fields_ = [
        ("n", c_uint),
        ("rules", ctypes.POINTER(AclPrefixRule)),
    ]


QUOTA_KINDS = 5  # BATON_QUOTA_KINDS
QUOTA_USED = 3  # BATON_QUOTA_USED


class Quota(Structure):
    """struct baton_quota."""

    _fields_ = [
        ("subject", c_char * (ACL_IDENTITY_MAX + 1)),
        ("limits", c_uint * QUOTA_KINDS),
        ("used", c_uint * QUOTA_USED),
    ]


class Quotas(Structure):
    """struct baton_quotas."""

    _fields_ = [
        ("n", c_uint),
        ("quotas", ctypes.POINTER(Quota)),
    ]


class SessionHold(Structure):
    """struct baton_session_hold."""

    _fields_ = [
        ("name", c_char * (NAME_MAX + 1)),
        ("waiting", c_int),
        ("mode", c_int),
        ("owner", c_uint64),
        ("token", c_uint64),
        ("count", c_uint32),
        ("permits", c_uint32),
        ("wait_ms", c_uint32),
    ]


class Session(Structure):
    """struct baton_session."""

    _fields_ = [
        ("id", c_uint64),
        ("client_name", c_char * (CLIENT_NAME_MAX + 1)),
        ("identity", c_char * (ACL_IDENTITY_MAX + 1)),
        ("address", c_char * (ADDRESS_MAX + 1)),
        ("ttl_ms", c_uint32),
        ("lock_delay_ms", c_uint32),
        ("left_ms", c_int64),
        ("idle_ms", c_int64),
        ("revoked", c_uint32),
        ("n_grants", c_uint32),
        ("n_waits", c_uint32),
        ("holds", ctypes.POINTER(SessionHold)),
        ("n_holds", c_size_t),
    ]


# Every struct mirrored here, by its C name, for the layout test.
ALL = {
    "baton_options": Options,
    "baton_holder": Holder,
    "baton_lock_info": LockInfo,
    "baton_grant": Grant,
    "baton_grant_value": GrantValue,
    "baton_lock_value": LockValue,
    "baton_acquire_options": AcquireOptions,
    "baton_member": Member,
    "baton_status": Status,
    "baton_node_version": NodeVersion,
    "baton_node_alarms": NodeAlarms,
    "baton_backup_info": BackupInfo,
    "baton_lock_name": LockName,
    "baton_fence": Fence,
    "baton_leader": Leader,
    "baton_event": Event,
    "baton_acl_rule": AclRule,
    "baton_acl_prefix_rule": AclPrefixRule,
    "baton_acl": Acl,
    "baton_rules": Rules,
    "baton_quota": Quota,
    "baton_quotas": Quotas,
    "baton_session_hold": SessionHold,
    "baton_session": Session,
}

__all__ = [
    "ACL_IDENTITY_MAX",
    "ACL_PREFIX_MAX",
    "ALARM_DIVERGED",
    "ALL",
    "AcquireOptions",
    "Acl",
    "AclPrefixRule",
    "AclRule",
    "BackupInfo",
    "CLIENT_NAME_MAX",
    "Event",
    "Fence",
    "Grant",
    "GrantValue",
    "HEALTH_CB",
    "Holder",
    "LOCK_LOST_CB",
    "Leader",
    "LockInfo",
    "LockName",
    "LockValue",
    "MULTI_MAX",
    "Member",
    "NAME_MAX",
    "NodeAlarms",
    "NodeVersion",
    "OPTIONS_SLACK",
    "Options",
    "QUOTA_KINDS",
    "QUOTA_USED",
    "Quota",
    "Quotas",
    "Rules",
    "SECRET_SIZE",
    "SESSION_CB",
    "STATUS_MAX_MEMBERS",
    "Secret",
    "Session",
    "SessionHold",
    "Status",
    "VALUE_MAX",
    "WATCH_CB",
    "WATCH_PREFIX",
]
