"""A live local cluster for the tests, started once per run with
scripts/cluster and removed at the end.

Ports: BATON_PY_TEST_BASE_PORT (default 27400), so raft BASE+1..3, clients
BASE+101..103, metrics BASE+201..203; scripts/test may set another base.
The cluster runs with TLS and with small limits (CLUSTER_CONFIG), so that
every limit error can be reached with a few requests (a watch's too).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterator, List

import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "bindings" / "python"
CLUSTER = ROOT / "scripts" / "cluster"
HEADER = ROOT / "include" / "baton.h"


def public_header_text() -> str:
    """include/baton.h and the topic headers it includes, in that order.

    baton.h declares nothing itself: each function, struct and constant is
    in one of the include/baton/ headers it includes, so the binding's
    tests read what a C program including baton.h sees.
    """
    text = HEADER.read_text()
    parts = [text]
    for name in re.findall(r'^#include "(baton/\w+\.h)"', text, re.M):
        parts.append((HEADER.parent / name).read_text())
    return "\n".join(parts)

# Small limits, so that each BATON_E* limit error takes a handful of calls.
CLUSTER_CONFIG = "\n".join(
    [
        "max-sessions = 48",
        "max-locks-per-session = 64",
        "max-waiters-per-lock = 8",
        "max-holders-per-lock = 4",
        "max-permits = 16",
        "max-names-per-acquire = 4",
        "max-lock-delay-ms = 2000",
        # Watches: a short history, so that a resume from an old position
        # is BATON_ECOMPACTED after 64 events, and room for 4 watches on
        # one connection, so that a fifth is BATON_ETOOMANYWATCHES.
        "watch-history = 64",
        "max-watches-per-connection = 4",
    ]
)


@dataclass
class Cluster:
    """The running test cluster: where it is and how to drive it."""

    dir: Path
    base: int
    env: Dict[str, str]  # BATON_ENDPOINTS and the admin's TLS files

    @property
    def endpoints(self) -> str:
        return self.env["BATON_ENDPOINTS"]

    def run(self, *args: str, timeout: float = 90) -> str:
        """scripts/cluster ARGS on this cluster; its stdout."""
        out = subprocess.run(
            [str(CLUSTER), *args],
            env=cluster_env(self.dir, self.base),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if out.returncode != 0:
            raise RuntimeError(
                f"scripts/cluster {' '.join(args)}: {out.stderr}{out.stdout}"
            )
        return out.stdout

    def pids(self) -> List[int]:
        return [
            int((self.dir / f"node{i}.pid").read_text())
            for i in (1, 2, 3)
            if (self.dir / f"node{i}.pid").exists()
        ]

    def signal_all(self, sig: signal.Signals) -> None:
        for pid in self.pids():
            os.kill(pid, sig)

    def client_cert(self, name: str) -> Dict[str, str]:
        """TLS files of a client certificate `name` signed by the cluster's
        CA (role: the cluster's default, `lock`)."""
        tls = self.dir / "tls"
        certs(tls, "--nodes", "3", "--client", name)
        return {
            "ca": str(tls / "ca.crt"),
            "cert": str(tls / f"{name}.crt"),
            "key": str(tls / f"{name}.key"),
        }

    def other_ca(self, name: str) -> Path:
        """Another CA than the cluster's, in the cluster's directory under
        `name`: its ca.crt, and admin.crt and admin.key that it signed."""
        other = self.dir / name
        certs(other, "--nodes", "1")
        return other


def certs(directory: Path, *args: str) -> None:
    """scripts/certs DIRECTORY ARGS: the files it lacks, made."""
    subprocess.run(
        [str(ROOT / "scripts" / "certs"), str(directory), *args],
        check=True,
        capture_output=True,
        timeout=60,
    )


def cluster_env(state: Path, base: int) -> Dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("BATON_") or k == "BATON_LIBRARY"
    }
    env.update(
        BATON_BASE_PORT=str(base),
        BATON_CLUSTER_DIR=str(state),
        BATON_NODE_CONFIG=CLUSTER_CONFIG,
    )
    return env


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    base = int(os.environ.get("BATON_PY_TEST_BASE_PORT", "27400"))
    state = Path(tempfile.mkdtemp(prefix="baton-pytest-"))
    env = cluster_env(state, base)
    up = subprocess.run(
        [str(CLUSTER), "up"], env=env, capture_output=True, text=True, timeout=600
    )
    try:
        if up.returncode != 0:
            pytest.fail(f"scripts/cluster up failed:\n{up.stdout}\n{up.stderr}")
        lines = subprocess.run(
            [str(CLUSTER), "env"], env=env, capture_output=True, text=True, check=True
        ).stdout
        client_env: Dict[str, str] = {}
        for line in lines.splitlines():
            if line.startswith("export "):
                key, _, value = line[len("export ") :].partition("=")
                client_env[key] = value.strip("'")
        saved = {k: os.environ.get(k) for k in client_env}
        os.environ.update(client_env)
        try:
            yield Cluster(state, base, client_env)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    finally:
        # SIGCONT first: a test that failed while the nodes were stopped
        # must not leave them stopped for `down`.
        for i in (1, 2, 3):
            pid_file = state / f"node{i}.pid"
            if pid_file.exists():
                try:
                    os.kill(int(pid_file.read_text()), signal.SIGCONT)
                except (OSError, ValueError):
                    pass
        subprocess.run(
            [str(CLUSTER), "down", "--purge"], env=env, capture_output=True, timeout=120
        )
        shutil.rmtree(state, ignore_errors=True)


@pytest.fixture
def client(cluster: Cluster) -> Iterator["object"]:
    """A Client of the test cluster (admin certificate), closed after."""
    import baton

    with baton.Client(ttl=5.0, timeout=5.0) as c:
        yield c


@pytest.fixture
def unique(request: pytest.FixtureRequest) -> Callable[[str], str]:
    """Lock names no other test uses: the test's name and a suffix."""
    stem = request.node.name.replace("[", "-").replace("]", "")

    def name(suffix: str = "") -> str:
        return f"py-{stem}-{suffix}-{time.monotonic_ns()}"

    return name


def wait_for(predicate: Callable[[], bool], timeout: float, step: float = 0.02) -> bool:
    """Poll `predicate` until it holds or `timeout` s pass; whether it held."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return predicate()
