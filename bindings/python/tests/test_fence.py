"""baton.Fence: libbaton's fence, made thread-safe (no cluster needed)."""

from __future__ import annotations

import threading

import pytest

import baton


def test_admits_equal_and_higher_refuses_lower():
    f = baton.Fence()
    assert f.highest == 0
    f.admit(5)
    f.admit(5)  # the same holder writes again
    f.admit(9)
    assert f.highest == 9
    with pytest.raises(baton.StaleTokenError) as e:
        f.admit(8)
    assert e.value.code == -11 and f.highest == 9
    assert f.admits(10) and not f.admits(3)


def test_admitting_holds_the_fence_for_the_write():
    f = baton.Fence()
    log = []
    entered = threading.Event()
    release = threading.Event()

    def old_writer():
        with f.admitting(4):
            entered.set()
            release.wait(5)
            log.append(4)

    t = threading.Thread(target=old_writer)
    t.start()
    entered.wait(5)
    newer = threading.Thread(target=lambda: (f.admit(7), log.append(7)))
    newer.start()
    newer.join(0.2)
    assert newer.is_alive()  # waits for the old writer's write to finish
    release.set()
    t.join(5)
    newer.join(5)
    assert log == [4, 7]
    with pytest.raises(baton.StaleTokenError):
        with f.admitting(4):
            log.append("never")
    assert log == [4, 7]


def test_fences_per_name():
    fences = baton.Fences()
    fences.admit("a", 10)
    fences.admit("b", 3)  # another name: its own highest
    with pytest.raises(baton.StaleTokenError):
        fences.admit("a", 9)
    assert fences["a"].highest == 10 and fences["b"].highest == 3
