"""A session bound to its owner's health: Client.health_check() closes the
session when the check says so (its lock goes to the next taker at once,
long before the TTL), and Client.close_session() does it on demand."""

from __future__ import annotations

import sys
import threading

import pytest

import baton

from conftest import wait_for


def test_health_check_closes_the_session(cluster, unique):
    name = unique("health")
    healthy = threading.Event()
    healthy.set()
    calls = []
    lost = []

    def check() -> bool:
        calls.append(1)
        return healthy.is_set()

    # A TTL of 30 s: a lock free within the waits below was freed by the
    # close, not by an expiry.
    with baton.Client(ttl=30.0, on_lock_lost=lambda n, t: lost.append((n, t))) as a, \
            baton.Client(ttl=10.0) as b:
        with pytest.raises(ValueError):
            a.health_check(check, interval=0.001)
        a.health_check(check, interval=0.05)
        lease = a.lock(name).acquire()
        first = a.session_id
        assert wait_for(lambda: len(calls) >= 3, 10.0)
        with pytest.raises(baton.BusyError):
            b.lock(name, wait=0).acquire()

        healthy.clear()
        assert wait_for(lambda: a.session_state == baton.SessionState.EXPIRED, 10.0)
        other = b.lock(name, wait=10.0).acquire()
        assert other.token > lease.token
        assert wait_for(lambda: lost == [(name, lease.token)], 10.0)
        assert lease.state == baton.LeaseState.EXPIRED
        other.release()

        # Healthy again: a new session, checked as the first was; stopped.
        healthy.set()
        again = a.lock(name).acquire()
        assert a.session_id != first
        a.health_check(None)
        healthy.clear()
        n = len(calls)
        threading.Event().wait(0.3)
        assert len(calls) == n
        assert a.session_state == baton.SessionState.LIVE

        # On demand.
        a.close_session()
        assert a.session_state == baton.SessionState.EXPIRED
        assert again.state == baton.LeaseState.EXPIRED
        with pytest.raises(baton.NoSessionError):
            a.close_session()
        b.lock(name, wait=10.0).acquire().release()


def test_health_check_exception_is_ill_health(cluster, unique, monkeypatch):
    name = unique("health-raise")
    seen = []

    def check() -> bool:
        raise RuntimeError("disk gone")

    monkeypatch.setattr(sys, "unraisablehook", lambda args: seen.append(args.exc_value))
    with baton.Client(ttl=30.0) as a, baton.Client(ttl=10.0) as b:
        a.lock(name).acquire()
        a.health_check(check, interval=0.05)
        b.lock(name, wait=10.0).acquire().release()
        assert any(isinstance(e, RuntimeError) for e in seen)
