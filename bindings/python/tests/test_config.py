"""Environment variables, TLS choices, library loading order, owner tags
(no cluster needed)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

import baton
from baton import _library, config, owners

from conftest import PACKAGE, ROOT, public_header_text


def test_endpoints_argument_then_environment_then_default(monkeypatch):
    monkeypatch.delenv("BATON_ENDPOINTS", raising=False)
    assert config.endpoints_from(None) == baton.DEFAULT_ENDPOINTS
    monkeypatch.setenv("BATON_ENDPOINTS", "10.0.0.1:7101")
    assert config.endpoints_from(None) == "10.0.0.1:7101"
    assert config.endpoints_from(["a:1", "b:2"]) == "a:1,b:2"
    assert config.endpoints_from("c:3") == "c:3"


def test_tls_from_environment(monkeypatch):
    for v in ("BATON_CACERT", "BATON_CERT", "BATON_KEY"):
        monkeypatch.delenv(v, raising=False)
    assert config.tls_from(None) is None and config.tls_from(False) is None
    with pytest.raises(ValueError):
        config.tls_from(True)
    monkeypatch.setenv("BATON_CACERT", "/ca")
    with pytest.raises(ValueError, match="BATON_CERT"):
        config.tls_from(None)
    monkeypatch.setenv("BATON_CERT", "/c")
    monkeypatch.setenv("BATON_KEY", "/k")
    assert config.tls_from(None) == baton.TLS("/ca", "/c", "/k")
    explicit = baton.TLS("/x", "/y", "/z")
    assert config.tls_from(explicit) is explicit
    with pytest.raises(ValueError, match="plain"):
        config.tls_from(False)  # libbaton would read the variables anyway


def test_default_default_endpoints_are_libbatons():
    header = public_header_text()
    assert f'#define BATON_DEFAULT_ENDPOINTS "{baton.DEFAULT_ENDPOINTS}"' in header


def test_library_order(monkeypatch):
    monkeypatch.setenv("BATON_LIBRARY", "/explicit/libbaton.so")
    assert _library.candidates() == ["/explicit/libbaton.so"]
    monkeypatch.delenv("BATON_LIBRARY")
    found = _library.candidates()
    assert found[0] == str(ROOT / "build" / ".libs" / "libbaton.so")
    assert found[-1] == _library.SONAME


def _load_in_child(env):
    code = "import baton; print(baton.library_path(), baton.library_version())"
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=str(PACKAGE),
        capture_output=True,
        text=True,
    )


def test_library_from_environment_wins_and_is_not_second_guessed():
    tree = str(ROOT / "build" / ".libs" / "libbaton.so.1")
    env = dict(os.environ, BATON_LIBRARY=tree, PYTHONPATH=str(PACKAGE))
    out = _load_in_child(env)
    assert out.returncode == 0 and out.stdout.split()[0] == tree
    env["BATON_LIBRARY"] = "/nonexistent/libbaton.so"
    out = _load_in_child(env)
    assert out.returncode != 0 and "BATON_LIBRARY" in out.stderr


def test_owner_tags():
    tag = owners.thread_owner()
    assert tag == owners.THREAD_BIT | threading.get_native_id()
    other = []
    t = threading.Thread(target=lambda: other.append(owners.thread_owner()))
    t.start()
    t.join()
    assert other[0] != tag
    assert owners.check(None) is None and owners.check(5) == 5
    with pytest.raises(ValueError):
        owners.check(0)
    with pytest.raises(TypeError):
        owners.check(True)


def test_task_owners_differ_per_task():
    import asyncio

    async def tag():
        return owners.task_owner()

    async def main():
        a, b = await asyncio.gather(tag(), tag())
        return a, b, owners.task_owner(), owners.task_owner()

    a, b, c, d = asyncio.run(main())
    assert len({a, b, c}) == 3 and c == d
    assert all(x & owners.TASK_BIT and x & owners.THREAD_BIT for x in (a, b, c))
