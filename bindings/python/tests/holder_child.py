"""A child process for test_pause.py and test_elections.py: holds a lock
(or, with `campaign`, leads the election NAME) until told to go on, then
reports what it was told of it as one JSON line.

    python3 holder_child.py NAME TTL_S [lock|campaign]
"""

from __future__ import annotations

import json
import sys
import time

import baton


def main() -> None:
    name, ttl = sys.argv[1], float(sys.argv[2])
    kind = sys.argv[3] if len(sys.argv) > 3 else "lock"
    lost = []
    states = []
    client = baton.Client(
        ttl=ttl,
        on_lock_lost=lambda n, t: lost.append([n, t]),
        on_session=lambda s: states.append(s.name),
    )
    if kind == "campaign":
        lease: baton.Lease = client.campaign(name, "child", wait=5).acquire()
    else:
        lease = client.acquire(name, wait=5)
    print(json.dumps({"token": lease.token, "session": lease.session}), flush=True)
    sys.stdin.readline()  # the parent stops us here, past the TTL, then resumes us
    report = {"state_at_resume": lease.state.name}
    try:
        lease.release()
        report["release"] = "ok"
    except baton.Error as e:
        report["release"] = type(e).__name__
        report["release_code"] = e.code
    report["lost_event"] = lease.lost.wait(10.0)
    deadline = time.monotonic() + 5
    while not lost and time.monotonic() < deadline:
        time.sleep(0.01)
    report.update(
        lost=lost,
        states=states,
        state=lease.state.name,
        transitions=[s.name for _, s in lease.transitions],
    )
    try:
        lease.guard()
        report["guard"] = "ok"
    except baton.Error as e:
        report["guard"] = type(e).__name__
    client.close()
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
