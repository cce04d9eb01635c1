#!/usr/bin/env python3
"""A cron-style job guarded by a Baton lock.

    python3 lock.py [--lock NAME] [--wait SECONDS] [--steps N] [--ttl SECONDS]

Run it from cron on several machines: one run at a time does the job, the
others find the lock taken and exit 75 (EX_TEMPFAIL) at once (or after
--wait seconds in the lock's queue). The run that holds the lock prints its
fencing token and checks its lease before each step, so a run that was
paused past its session's TTL (and lost the lock to another run) stops
instead of writing over the newer run's work; exit 1 then.

The cluster comes from BATON_ENDPOINTS, and TLS files from BATON_CACERT,
BATON_CERT and BATON_KEY, as for batonctl (eval "$(scripts/cluster env)").
"""

from __future__ import annotations

import argparse
import sys
import time

import baton

EX_TEMPFAIL = 75

# Stands in for the storage the job writes to: it remembers the highest
# token it has admitted and refuses older ones (a real store keeps that
# number with the data).
store = baton.Fence()


def step(lease: baton.Lease, n: int) -> None:
    # Check the lease first (it must last the step), then write with the
    # token, which the store checks.
    lease.guard(need=1.0)
    with store.admitting(lease.token):
        print(f"step {n}: written under token {lease.token}", flush=True)
    time.sleep(0.2)  # the work


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lock", default="nightly-report", help="lock name")
    ap.add_argument("--wait", type=float, default=0.0, help="seconds to wait for it")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--ttl", type=float, default=10.0, help="session TTL, s")
    args = ap.parse_args()

    def lost(name: str, token: int) -> None:
        # libbaton's thread: just say so; the next guard() stops the job.
        print(f"lost {name} (token {token})", file=sys.stderr, flush=True)

    with baton.Client(ttl=args.ttl, client_name="lock.py", on_lock_lost=lost) as client:
        try:
            with client.lock(args.lock, wait=args.wait) as lease:
                print(f"locked {args.lock} with token {lease.token}", flush=True)
                for n in range(1, args.steps + 1):
                    step(lease, n)
        except (baton.BusyError, baton.TimedOutError):
            holder = client.holder(args.lock)
            print(
                f"{args.lock} is held by {holder.client_name} (token {holder.token}): "
                "another run is in progress",
                file=sys.stderr,
            )
            return EX_TEMPFAIL
        except baton.LockLost as e:
            print(f"stopped: {e}", file=sys.stderr)
            return 1
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
