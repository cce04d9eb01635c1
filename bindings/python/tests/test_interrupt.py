"""Ctrl-C interrupts a wait for a lock on the main thread, and a grant
that comes after it is given back."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys

import baton

from conftest import PACKAGE, wait_for

CHILD = """
import json, sys, time, baton
c = baton.Client()
print("waiting", flush=True)
try:
    c.acquire(sys.argv[1])                  # waits forever: the lock is held
    print(json.dumps({"got": True}), flush=True)
except KeyboardInterrupt:
    print(json.dumps({"interrupted": True, "session": c.session_id}), flush=True)
sys.stdin.readline()                        # hold the session open meanwhile
c.close()
"""


def read_line(child: subprocess.Popen, timeout: float) -> str:
    """The child's next line; AssertionError if none comes in time."""
    ready, _, _ = select.select([child.stdout], [], [], timeout)
    assert ready, f"no line from the child within {timeout} s"
    return child.stdout.readline()


def test_ctrl_c_interrupts_a_wait(cluster, client, unique):
    name = unique()
    env = dict(os.environ, PYTHONPATH=str(PACKAGE))
    held = client.acquire(name)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, name],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert read_line(child, 10).strip() == "waiting"
        assert wait_for(lambda: client.holder(name).waiters == 1, 5.0)
        child.send_signal(signal.SIGINT)
        report = json.loads(read_line(child, 5))  # not after the wait ends
        assert report["interrupted"] is True
        # The child's wait is still queued; the lock goes to it when freed,
        # and the child gives it back at once.
        held.release()
        assert wait_for(lambda: not client.holder(name).held, 5.0)
        grants = [g.session for g in client.holders(name)]
        assert report["session"] not in grants
        child.stdin.write("\n")
        child.stdin.flush()
        assert child.wait(15) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
