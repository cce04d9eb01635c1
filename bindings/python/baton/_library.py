"""Finding and loading libbaton, and the C signature of each function.

The library is looked for, in this order:

1. the path in the environment variable BATON_LIBRARY;
2. the in-tree build, when this package runs from a Baton source tree
   (bindings/python/baton/ -> build/.libs/libbaton.so at the top);
3. ctypes.util.find_library("baton") (the system's linker cache);
4. the soname libbaton.so.1, through the dynamic loader's own search
   (LD_LIBRARY_PATH, /etc/ld.so.conf), for an install ldconfig has not
   indexed yet.

Loading is lazy: `import baton` works without libbaton, and the first call
that needs it loads it once.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from ctypes import POINTER, c_char_p, c_int, c_int64, c_size_t, c_uint32, c_uint64
from ctypes import c_uint, c_void_p
from pathlib import Path
from typing import List, Optional, Tuple

from . import _structs as s

SONAME = "libbaton.so.1"

# (name, restype, argtypes) of every function of baton.h.
_SIGNATURES: List[Tuple[str, object, List[object]]] = [
    ("baton_strerror", c_char_p, [c_int]),
    ("baton_errname", c_char_p, [c_int]),
    ("baton_errmsg", c_char_p, [c_int]),
    ("baton_version", c_char_p, []),
    ("baton_options_init", None, [c_void_p]),
    ("baton_client_create", c_int, [POINTER(c_void_p), c_char_p, c_void_p]),
    ("baton_client_destroy", None, [c_void_p]),
    (
        "baton_acquire",
        c_int,
        [c_void_p, c_char_p, c_uint64, c_int64, POINTER(c_uint64)],
    ),
    (
        "baton_acquire_shared",
        c_int,
        [c_void_p, c_char_p, c_uint64, c_int64, POINTER(c_uint64)],
    ),
    (
        "baton_sem_acquire",
        c_int,
        [c_void_p, c_char_p, c_uint32, c_uint32, c_uint64, c_int64, POINTER(c_uint64)],
    ),
    (
        "baton_multi_acquire",
        c_int,
        [c_void_p, POINTER(s.LockName), c_size_t, c_uint64, c_int64, POINTER(c_uint64)],
    ),
    (
        "baton_multi_release",
        c_int,
        [c_void_p, POINTER(s.LockName), c_size_t, c_uint64, c_uint64],
    ),
    ("baton_release", c_int, [c_void_p, c_char_p, c_uint64, c_uint64]),
    (
        "baton_acquire_with",
        c_int,
        [
            c_void_p,
            c_char_p,
            c_uint64,
            c_int64,
            POINTER(s.AcquireOptions),
            POINTER(c_uint64),
        ],
    ),
    ("baton_set_value", c_int, [c_void_p, c_char_p, c_uint64, c_uint64, c_char_p]),
    ("baton_extend", c_int, [c_void_p, c_char_p, c_uint64, c_uint64, c_uint32]),
    (
        "baton_set_value_in",
        c_int,
        [
            c_void_p,
            c_uint64,
            POINTER(s.Secret),
            c_char_p,
            c_uint64,
            c_uint64,
            c_char_p,
        ],
    ),
    (
        "baton_campaign",
        c_int,
        [c_void_p, c_char_p, c_char_p, c_uint64, c_int64, POINTER(c_uint64)],
    ),
    ("baton_proclaim", c_int, [c_void_p, c_char_p, c_uint64, c_uint64, c_char_p]),
    ("baton_resign", c_int, [c_void_p, c_char_p, c_uint64, c_uint64]),
    ("baton_leader", c_int, [c_void_p, c_char_p, POINTER(s.Leader)]),
    (
        "baton_watch_open",
        c_int,
        [c_void_p, c_char_p, c_int, c_uint64, c_uint32, POINTER(c_void_p)],
    ),
    (
        "baton_watch_open_cb",
        c_int,
        [
            c_void_p,
            c_char_p,
            c_int,
            c_uint64,
            c_uint32,
            s.WATCH_CB,
            c_void_p,
            POINTER(c_void_p),
        ],
    ),
    ("baton_watch_next", c_int, [c_void_p, POINTER(s.Event), c_int64]),
    ("baton_watch_close", None, [c_void_p]),
    ("baton_client_detach", c_int, [c_void_p, POINTER(c_uint64), POINTER(s.Secret)]),
    (
        "baton_release_in",
        c_int,
        [c_void_p, c_uint64, POINTER(s.Secret), c_char_p, c_uint64, c_uint64],
    ),
    ("baton_holder", c_int, [c_void_p, c_char_p, POINTER(s.Holder)]),
    (
        "baton_list",
        c_int,
        [
            c_void_p,
            c_char_p,
            POINTER(s.LockInfo),
            c_size_t,
            POINTER(c_size_t),
            POINTER(c_int),
        ],
    ),
    (
        "baton_holders",
        c_int,
        [
            c_void_p,
            c_char_p,
            POINTER(s.Grant),
            c_size_t,
            POINTER(c_size_t),
            POINTER(c_int),
        ],
    ),
    (
        "baton_holders_values",
        c_int,
        [
            c_void_p,
            c_char_p,
            POINTER(s.GrantValue),
            c_size_t,
            POINTER(c_size_t),
            POINTER(c_int),
        ],
    ),
    (
        "baton_list_values",
        c_int,
        [
            c_void_p,
            c_char_p,
            POINTER(s.LockValue),
            c_size_t,
            POINTER(c_size_t),
            POINTER(c_int),
        ],
    ),
    ("baton_check", c_int, [c_void_p, c_char_p, c_uint64]),
    ("baton_session_state", c_int, [c_void_p]),
    ("baton_session_remaining_ms", c_int64, [c_void_p]),
    ("baton_session_id", c_uint64, [c_void_p]),
    ("baton_session_close", c_int, [c_void_p]),
    ("baton_health_check", c_int, [c_void_p, s.HEALTH_CB, c_uint32, c_void_p]),
    ("baton_status", c_int, [c_void_p, c_char_p, POINTER(s.Status)]),
    (
        "baton_status_version",
        c_int,
        [c_void_p, c_char_p, POINTER(s.Status), POINTER(s.NodeVersion)],
    ),
    (
        "baton_status_alarms",
        c_int,
        [
            c_void_p,
            c_char_p,
            POINTER(s.Status),
            POINTER(s.NodeVersion),
            POINTER(s.NodeAlarms),
        ],
    ),
    (
        "baton_backup_save",
        c_int,
        [c_void_p, c_char_p, c_uint32, POINTER(s.BackupInfo)],
    ),
    ("baton_backup_inspect", c_int, [c_char_p, POINTER(s.BackupInfo)]),
    ("baton_member_add", c_int, [c_void_p, c_uint64, c_char_p, c_char_p]),
    ("baton_member_remove", c_int, [c_void_p, c_uint64]),
    ("baton_session_revoke", c_int, [c_void_p, c_uint64]),
    ("baton_revoke", c_int, [c_void_p, c_char_p, c_uint64, c_uint64]),
    ("baton_transfer", c_int, [c_void_p, c_uint64]),
    (
        "baton_transfer_to",
        c_int,
        [c_void_p, c_uint64, POINTER(c_uint64), POINTER(c_uint64)],
    ),
    ("baton_acl_list", c_int, [c_void_p, POINTER(s.Acl)]),
    ("baton_acl_free", None, [POINTER(s.Acl)]),
    ("baton_acl_set", c_int, [c_void_p, c_char_p, c_int]),
    ("baton_acl_remove", c_int, [c_void_p, c_char_p]),
    ("baton_rule_list", c_int, [c_void_p, POINTER(s.Rules)]),
    ("baton_rules_free", None, [POINTER(s.Rules)]),
    ("baton_rule_set", c_int, [c_void_p, c_char_p, c_char_p, c_int]),
    ("baton_rule_remove", c_int, [c_void_p, c_char_p, c_char_p]),
    ("baton_quota_name", c_char_p, [c_int]),
    ("baton_quota_list", c_int, [c_void_p, POINTER(s.Quotas)]),
    ("baton_quotas_free", None, [POINTER(s.Quotas)]),
    ("baton_quota_set", c_int, [c_void_p, c_char_p, POINTER(c_uint)]),
    ("baton_quota_remove", c_int, [c_void_p, c_char_p]),
    (
        "baton_sessions",
        c_int,
        [
            c_void_p,
            c_uint64,
            c_size_t,
            POINTER(POINTER(s.Session)),
            POINTER(c_size_t),
            POINTER(c_uint64),
        ],
    ),
    (
        "baton_session_info",
        c_int,
        [c_void_p, c_uint64, POINTER(POINTER(s.Session))],
    ),
    ("baton_sessions_free", None, [POINTER(s.Session), c_size_t]),
    ("baton_fence_init", None, [POINTER(s.Fence)]),
    ("baton_fence_admit", c_int, [POINTER(s.Fence), c_uint64]),
]

# The functions the binding uses, for the test that every one of baton.h's
# is bound.
FUNCTIONS = tuple(name for name, _, _ in _SIGNATURES)

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_path: Optional[str] = None


def _source_tree_library() -> Optional[Path]:
    """libbaton of the in-tree build when this package sits in a source tree."""
    root = Path(__file__).resolve().parents[3]
    if not (root / "include" / "baton.h").is_file():
        return None
    candidate = root / "build" / ".libs" / "libbaton.so"
    return candidate if candidate.is_file() else None


def candidates() -> List[str]:
    """Where the library is looked for, in order (see the module's doc)."""
    found: List[str] = []
    explicit = os.environ.get("BATON_LIBRARY")
    if explicit:
        # An explicit choice is the only one: falling back to another
        # library would hide a typo.
        return [explicit]
    tree = _source_tree_library()
    if tree is not None:
        found.append(str(tree))
    system = ctypes.util.find_library("baton")
    if system is not None:
        found.append(system)
    found.append(SONAME)
    return found


def _declare(lib: ctypes.CDLL) -> None:
    for name, restype, argtypes in _SIGNATURES:
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


def load() -> ctypes.CDLL:
    """The loaded libbaton, loading it on first use; OSError if none loads."""
    global _lib, _path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        errors: List[str] = []
        for path in candidates():
            try:
                # CDLL (not PyDLL): every call releases the GIL, so a call
                # that waits for a lock lets other Python threads run.
                lib = ctypes.CDLL(path)
                _declare(lib)
            except (OSError, AttributeError) as e:
                errors.append(f"{path}: {e}")
                continue
            _lib, _path = lib, path
            return lib
        raise OSError(
            "cannot load libbaton (set BATON_LIBRARY to its path): " + "; ".join(errors)
        )


def loaded_path() -> Optional[str]:
    """The path or name the library was loaded from; None before loading."""
    return _path
