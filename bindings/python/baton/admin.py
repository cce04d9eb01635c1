"""The administrative calls of a Client: revocation and membership. The
cluster allows them to certificates with the admin role only
(PermissionDeniedError otherwise). A mixin of Client.
"""

from __future__ import annotations

from typing import Any, Callable

from .errors import check
from .request import Name, encode_name


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

    def transfer(self, id: int = 0) -> None:
        """Ask the leader to hand leadership to node `id` (0: any voter)."""
        check(self._call(self._lib.baton_transfer, id), f"transfer to {id or 'any'}")
