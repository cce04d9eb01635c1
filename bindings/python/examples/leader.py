#!/usr/bin/env python3
"""An election with Baton: one process leads, the others wait their turn.

    python3 leader.py campaign NAME [--value VALUE] [--steps N] [--wait SECONDS] [--ttl SECONDS]
    python3 leader.py observe NAME [--count N]

campaign: waits to lead the election NAME (candidates lead in the order
they came), prints the leadership's fencing token, works --steps steps
while leading, checking the lease before each one, and resigns, which
hands the leadership to the next candidate. A leader that loses the
leadership meanwhile (its session expired while it was paused, or an
administrator revoked it) stops at its next step: exit 1. With --wait, a
candidate that does not lead within that many seconds gives up: exit 75.

observe: prints who leads NAME now, then each new leader and each value a
leader proclaims, one line each, until --count lines or Ctrl-C.

The cluster comes from BATON_ENDPOINTS, and TLS files from BATON_CACERT,
BATON_CERT and BATON_KEY, as for batonctl (eval "$(scripts/cluster env)").
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Optional

import baton

EX_TEMPFAIL = 75

# Stands in for what the leader writes to: it refuses a token older than
# one it has seen, so a deposed leader cannot write after its successor.
store = baton.Fence()


def campaign(
    client: baton.Client, name: str, value: str, steps: int, wait: Optional[float]
) -> int:
    try:
        with client.campaign(name, value, wait=wait) as lead:
            print(
                f"leading {name} with token {lead.token} (value {lead.value!r})",
                flush=True,
            )
            for n in range(1, steps + 1):
                lead.guard(need=1.0)  # raises once the leadership is lost
                with store.admitting(lead.token):
                    print(f"step {n}: work under token {lead.token}", flush=True)
                time.sleep(0.2)  # the work
    except baton.TimedOutError:
        now = client.leader(name)
        print(
            f"{name} is led by {now.client_name} (token {now.token}, value "
            f"{now.value!r}); gave up waiting",
            file=sys.stderr,
        )
        return EX_TEMPFAIL
    except baton.LockLost as e:
        print(f"deposed: {e}", file=sys.stderr)
        return 1
    print("resigned", flush=True)
    return 0


def observe(client: baton.Client, name: str, count: Optional[int]) -> int:
    with client.observe(name) as observer:
        print(f"observing {name}", flush=True)  # the watch runs from here on
        for shown, change in enumerate(observer, 1):
            print(
                f"leader of {name}: token {change.token} session {change.session} "
                f"value {change.value!r}",
                flush=True,
            )
            if count is not None and shown >= count:
                break
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["campaign", "observe"])
    ap.add_argument("name", help="the election's name")
    ap.add_argument("--value", default="", help="what the leader advertises")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--wait", type=float, default=None, help="seconds to wait to lead")
    ap.add_argument("--ttl", type=float, default=10.0, help="session TTL, s")
    ap.add_argument("--count", type=int, default=None, help="leaderships to show")
    args = ap.parse_args()

    def lost(name: str, token: int) -> None:
        # libbaton's thread: just say so; the next guard() stops the work.
        print(f"lost {name} (token {token})", file=sys.stderr, flush=True)

    with baton.Client(
        ttl=args.ttl, client_name=f"leader.py {args.mode}", on_lock_lost=lost
    ) as client:
        try:
            if args.mode == "campaign":
                return campaign(client, args.name, args.value, args.steps, args.wait)
            return observe(client, args.name, args.count)
        except KeyboardInterrupt:
            return 130


if __name__ == "__main__":
    sys.exit(main())
