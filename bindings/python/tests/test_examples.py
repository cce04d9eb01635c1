"""examples/lock.py runs its job under the lock, and a second run meanwhile
backs off; examples/leader.py leads in turn and observes the leaderships."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import baton

from conftest import PACKAGE


def example(script: str, *args: str) -> list:
    return [sys.executable, str(PACKAGE / "examples" / script), *args]


def env() -> dict:
    return dict(os.environ, PYTHONPATH=str(PACKAGE))


def run_example(*args: str, script: str = "lock.py") -> subprocess.CompletedProcess:
    return subprocess.run(
        example(script, *args),
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_lock_example_runs_and_backs_off(cluster, unique):
    name = unique()
    done = run_example("--lock", name, "--steps", "2")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    token = int(lines[0].rsplit(" ", 1)[1])
    assert lines == [
        f"locked {name} with token {token}",
        f"step 1: written under token {token}",
        f"step 2: written under token {token}",
        "done",
    ]
    with baton.Client(client_name="another-run") as c, c.lock(name):
        busy = run_example("--lock", name)
    assert busy.returncode == 75
    assert "held by another-run" in busy.stderr


def test_leader_example_campaigns_in_turn_and_observes(cluster, unique):
    name = unique()
    observer = subprocess.Popen(
        example("leader.py", "observe", name, "--count", "2"),
        stdout=subprocess.PIPE,
        text=True,
        env=env(),
    )
    try:
        assert observer.stdout.readline() == f"observing {name}\n"
        tokens = []
        for value, steps in (("first", 2), ("second", 1)):
            done = run_example(
                "campaign",
                name,
                "--value",
                value,
                "--steps",
                str(steps),
                script="leader.py",
            )
            assert done.returncode == 0, done.stderr
            lines = done.stdout.splitlines()
            token = int(re.match(r"leading \S+ with token (\d+) ", lines[0])[1])
            tokens.append(token)
            assert lines == [
                f"leading {name} with token {token} (value {value!r})",
                *[f"step {n}: work under token {token}" for n in range(1, steps + 1)],
                "resigned",
            ]
        out, _ = observer.communicate(timeout=30)
    finally:
        if observer.poll() is None:
            observer.kill()
            observer.wait()
    assert observer.returncode == 0
    assert tokens[1] > tokens[0]
    seen = [
        re.fullmatch(r"leader of \S+: token (\d+) session \d+ value '(\w+)'", line)
        for line in out.splitlines()
    ]
    assert [(int(m[1]), m[2]) for m in seen if m] == [
        (tokens[0], "first"),
        (tokens[1], "second"),
    ]
    assert len(seen) == 2


def test_leader_example_waits_then_gives_up(cluster, unique):
    name = unique()
    with baton.Client(client_name="the-leader") as c, c.campaign(name, "10.0.0.9:80"):
        busy = run_example("campaign", name, "--wait", "0.3", script="leader.py")
    assert busy.returncode == 75
    assert "led by the-leader" in busy.stderr and "'10.0.0.9:80'" in busy.stderr
