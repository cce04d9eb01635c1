"""A Python client paused (SIGSTOP) past its TTL loses its lock, is told
so, cannot release it, and another client gets it with a higher token."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import baton

from conftest import PACKAGE

TTL = 2.0


def test_paused_client_loses_the_lock(cluster, unique):
    name = unique()
    env = dict(os.environ, PYTHONPATH=str(PACKAGE))
    child = subprocess.Popen(
        [sys.executable, str(PACKAGE / "tests" / "holder_child.py"), name, str(TTL)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        first = json.loads(child.stdout.readline())
        with baton.Client() as other:
            assert other.holder(name).token == first["token"]
            os.kill(child.pid, signal.SIGSTOP)
            start = time.monotonic()
            # The cluster expires the silent session and hands the lock on.
            lease = other.acquire(name, wait=TTL * 5)
            waited = time.monotonic() - start
            assert lease.token > first["token"]
            assert other.holder(name).session == lease.session != first["session"]
            time.sleep(0.2)
            os.kill(child.pid, signal.SIGCONT)
            child.stdin.write("go\n")
            child.stdin.flush()
            report = json.loads(child.stdout.readline())
            # Still ours after the child tried its release.
            assert other.holder(name).token == lease.token
            lease.release()
        assert child.wait(10) == 0
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGCONT)
            child.kill()
            child.wait()
    assert waited >= TTL * 0.5  # it was handed on by an expiry, not early
    assert report["state_at_resume"] == "EXPIRED"
    assert report["release"] == "ExpiredError" and report["release_code"] == -7
    assert report["lost_event"] is True
    assert report["lost"] == [[name, first["token"]]]
    assert report["state"] == "EXPIRED"
    assert report["transitions"][0] == "LIVE" and report["transitions"][-1] == "EXPIRED"
    assert report["states"][-1] == "EXPIRED"
    assert report["guard"] == "ExpiredError"
