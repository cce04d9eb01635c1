"""The administrative calls of a Client: revocation, membership, the access
list, its rules on lock names and quotas, and online backups. The
cluster allows them to certificates with the admin role only
(PermissionDeniedError otherwise). A mixin of Client.
"""

from __future__ import annotations

import os
from ctypes import byref, c_uint, c_uint64
from typing import Any, Callable, Dict, Iterable, List, Union

from . import _structs
from ._library import load
from .errors import check
from .records import BackupInfo
from .request import Name, encode_name

Path = Union[str, "os.PathLike[str]"]

# The access list's roles, by value (enum baton_access_role).
_ROLES = ["none", "read", "lock", "admin"]

# The permissions a rule on lock names gives, by bit (BATON_PERM_*).
_PERMS = {"read": 1, "lock": 2, "manage": 4}

# What a quota limits, in enum baton_quota_kind's order.
_QUOTA_KINDS = ("sessions", "locks", "waiters", "watches", "rate")


def _backup_info(out: _structs.BackupInfo) -> BackupInfo:
    return BackupInfo(
        index=out.index,
        term=out.term,
        made_ms=out.made_ms,
        size=out.size,
        sessions=out.sessions,
        locks=out.locks,
        grants=out.grants,
        waiters=out.waiters,
    )


def backup_inspect(path: Path) -> BackupInfo:
    """Check the backup file at `path` offline (a SHA-256 covers every
    byte) and say what it holds: CorruptError for a changed or truncated
    file, VersionError for a newer format."""
    out = _structs.BackupInfo()
    check(
        load().baton_backup_inspect(os.fsencode(path), byref(out)),
        f"inspect {os.fsdecode(path)!r}",
    )
    return _backup_info(out)


class Admin:
    """Client's administrative calls (see Client)."""

    _lib: Any
    _call: Callable[..., Any]

    def revoke(self, name: Name, session: int, token: int) -> None:
        """Take `name` from `session`, which holds it with `token` (see
        holders()); the session lives on and its client is told."""
        check(
            self._call(self._lib.baton_revoke, encode_name(name), session, token),
            f"revoke {name!r} from session {session}",
        )

    def revoke_session(self, session: int) -> None:
        """End `session` at once, as an expiry would."""
        check(
            self._call(self._lib.baton_session_revoke, session),
            f"revoke session {session}",
        )

    def member_add(self, id: int, raft_address: str, client_address: str) -> None:
        """Add node `id` (running with join = true) to the cluster."""
        check(
            self._call(
                self._lib.baton_member_add,
                id,
                raft_address.encode(),
                client_address.encode(),
            ),
            f"add member {id}",
        )

    def member_remove(self, id: int) -> None:
        """Remove node `id` from the cluster."""
        check(self._call(self._lib.baton_member_remove, id), f"remove member {id}")

    def acl_list(self) -> dict:
        """The cluster's access list (docs/security.md, "Roles"):
        {"seeded": bool, "default_role": str, "rules": {identity: role}},
        roles as "admin", "lock", "read" or "none"."""
        out = _structs.Acl()
        check(self._call(self._lib.baton_acl_list, byref(out)), "acl list")
        try:
            rules = {
                out.rules[i].identity.decode(): _ROLES[out.rules[i].role]
                for i in range(out.n_rules)
            }
        finally:
            self._lib.baton_acl_free(byref(out))
        return {
            "seeded": bool(out.seeded),
            "default_role": _ROLES[out.default_role],
            "rules": rules,
        }

    def acl_add(self, identity: str, role: str) -> None:
        """Give certificate identity `identity` the role `role` ("admin",
        "lock", "read" or "none") in the cluster's access list."""
        if role not in _ROLES:
            raise ValueError(f"{role!r} is not a role (admin, lock, read, none)")
        check(
            self._call(
                self._lib.baton_acl_set, identity.encode(), _ROLES.index(role)
            ),
            f"acl add {identity}",
        )

    def acl_remove(self, identity: str) -> None:
        """Take `identity`'s rule out of the access list: it then has the
        default role (a node's identity, none)."""
        check(
            self._call(self._lib.baton_acl_remove, identity.encode()),
            f"acl remove {identity}",
        )

    def rule_list(self) -> List[dict]:
        """The access list's rules on lock names (docs/security.md, "Rules
        on lock names"), each {"subject": str, "group": bool, "prefix": str,
        "perms": [names]}, the permissions "read", "lock" and "manage", read
        included with the others."""
        out = _structs.Rules()
        check(self._call(self._lib.baton_rule_list, byref(out)), "rule list")
        try:
            return [
                {
                    "subject": r.subject.decode(),
                    "group": bool(r.group),
                    "prefix": r.prefix.decode(errors="surrogateescape"),
                    "perms": [p for p, bit in _PERMS.items() if r.perms & bit],
                }
                for r in (out.rules[i] for i in range(out.n))
            ]
        finally:
            self._lib.baton_rules_free(byref(out))

    def rule_add(self, subject: str, prefix: str, perms: Iterable[str]) -> None:
        """Give `subject` (a certificate identity, or "group:NAME" for the
        certificates whose subject has the OU NAME) the permissions `perms`
        ("read", "lock", "manage") on every lock name that starts with
        `prefix` ("" is every name). Once the list has a rule on names, a
        name is closed to what no rule gives."""
        perms = [perms] if isinstance(perms, str) else list(perms)
        bad = [p for p in perms if p not in _PERMS]
        if bad or not perms:
            raise ValueError(
                f"{bad or perms!r}: permissions are read, lock and manage"
            )
        bits = sum({_PERMS[p] for p in perms})
        check(
            self._call(
                self._lib.baton_rule_set,
                subject.encode(),
                encode_name(prefix),
                bits,
            ),
            f"rule add {subject} {prefix!r}",
        )

    def rule_remove(self, subject: str, prefix: str) -> None:
        """Take the rule of `subject` on `prefix` out of the access list."""
        check(
            self._call(
                self._lib.baton_rule_remove,
                subject.encode(),
                encode_name(prefix),
            ),
            f"rule remove {subject} {prefix!r}",
        )

    def quota_list(self) -> Dict[str, dict]:
        """The access list's quotas (docs/security.md, "Quotas per
        identity"): {subject: {"limits": {kind: n}, "used": {kind: n}}}, a
        subject an identity or "*" (every identity without a quota of its
        own), each kind of "sessions", "locks", "waiters", "watches" and
        "rate" with its limit (0: none), and what the identity's sessions
        use now of sessions, locks and waiters (0 for "*")."""
        out = _structs.Quotas()
        check(self._call(self._lib.baton_quota_list, byref(out)), "quota list")
        try:
            return {
                q.subject.decode(): {
                    "limits": dict(zip(_QUOTA_KINDS, q.limits)),
                    "used": dict(zip(_QUOTA_KINDS, q.used)),
                }
                for q in (out.quotas[i] for i in range(out.n))
            }
        finally:
            self._lib.baton_quotas_free(byref(out))

    def quota_set(self, subject: str, **limits: int) -> None:
        """Give `subject` (an identity, or "*") a quota, replacing its own:
        quota_set("team-b", sessions=4, locks=100); a kind not given, or 0,
        is not limited, and at least one is."""
        bad = [k for k in limits if k not in _QUOTA_KINDS]
        if bad:
            raise ValueError(
                f"{bad!r}: a quota limits {', '.join(_QUOTA_KINDS)}"
            )
        values = (c_uint * len(_QUOTA_KINDS))(
            *(int(limits.get(k, 0)) for k in _QUOTA_KINDS)
        )
        check(
            self._call(self._lib.baton_quota_set, subject.encode(), values),
            f"quota set {subject}",
        )

    def quota_remove(self, subject: str) -> None:
        """Take `subject`'s quota out of the access list."""
        check(
            self._call(self._lib.baton_quota_remove, subject.encode()),
            f"quota remove {subject}",
        )

    def backup(self, path: Path, timeout: float = 600.0) -> BackupInfo:
        """Take an online backup of the cluster's lock state into `path`
        (written whole or not at all; docs/operations.md, "Backup and
        restore"). Restore it with `batond --restore`."""
        out = _structs.BackupInfo()
        check(
            self._call(
                self._lib.baton_backup_save,
                os.fsencode(path),
                int(timeout * 1000),
                byref(out),
            ),
            f"backup to {os.fsdecode(path)!r}",
        )
        return _backup_info(out)

    def transfer(self, id: int = 0) -> int:
        """Ask the leader to hand leadership to node `id` (0: any voter), and
        wait until it has moved (baton_transfer_to()). Returns the id of the
        member leading now: another than `id` if it won the election
        instead (asked of the cluster when the node that led stepped down
        before the election ended), 0 if none was known in time."""
        led, leads = c_uint64(0), c_uint64(0)
        check(
            self._call(self._lib.baton_transfer_to, id, byref(led), byref(leads)),
            f"transfer to {id or 'any'}",
        )
        return int(leads.value)
