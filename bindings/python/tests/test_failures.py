"""Every exception class, raised by a real failure against the live cluster.

Each class of the table is either provoked here (PROVOKE) or listed in
UNREACHABLE with the reason a client cannot meet it through libbaton; a
test checks that the two cover the table exactly, so a new code needs a
decision. BATON_EUNAVAILABLE is provoked in test_leader.py, BATON_EEXPIRED
also in test_pause.py, JeopardyError in test_transitions.py.
"""

from __future__ import annotations

import signal
import threading
from typing import Callable, Dict, Type

import pytest

import baton
from baton import errors

from conftest import Cluster, wait_for


def free_endpoint(cluster: Cluster) -> str:
    """An address nothing listens on: between the cluster's raft ports
    (base+1..) and its client ports (base+101..)."""
    return f"127.0.0.1:{cluster.base + 99}"


Provoker = Callable[[Cluster, baton.Client, Callable[[str], str]], None]
PROVOKE: Dict[Type[baton.Error], Provoker] = {}


def provokes(cls: Type[baton.Error]) -> Callable[[Provoker], Provoker]:
    def register(fn: Provoker) -> Provoker:
        PROVOKE[cls] = fn
        return fn

    return register


UNREACHABLE = {
    baton.OutOfMemoryError: "a node or libbaton out of memory",
    baton.MalformedError: "libbaton only sends well-formed frames",
    baton.UnsupportedError: "libbaton refuses an unknown mode itself (BATON_EINVAL)",
    baton.VersionError: "libbaton speaks the cluster's encoding version",
    baton.ClosedError: "a closed session's secret never leaves libbaton (detach "
    "hands over a live one), so nothing can act in it after the close",
    baton.WaitCancelledError: "CANCEL is sent by libbaton itself, never answered to a user",
    baton.NotWaitingError: "as ECANCELLED: only libbaton's own CANCEL meets it",
    baton.InflightError: "libbaton keeps at most 31 requests in flight, the cluster allows 32",
    baton.SequenceError: "needs two release_in() of one session within one nanosecond",
    baton.ReentrancyOverflowError: "2**32 reentrant holds",
    baton.CorruptError: "a corrupt snapshot on a node",
    baton.NotFoundError: "answered to internal commands (UNBLOCK); member_remove "
    "of an unknown id is BATON_EINVAL",
    baton.NotLeaderError: "libbaton follows NOT_LEADER to the leader",
    baton.UnknownOutcomeError: "libbaton retries it under the same sequence number",
    baton.TooBigError: "libbaton never sends a frame over the limit",
    baton.TooManyConnectionsError: "libbaton retries another node; the limit is per node",
    baton.ShuttingDownError: "libbaton moves to another node while one shuts down",
    baton.NoSpaceError: "a node's full disk (the chaos suite's nemesis)",
    baton.NoBackupError: "answered only to the BACKUP frames of an online "
    "backup, which the Python API does not offer (batonctl snapshot save)",
    baton.NotReadyError: "as ENOBACKUP: a backup's first BACKUP frame, "
    "which libbaton itself asks again",
    baton.NotVoterError: "needs a spare member, which only a node left half "
    "added makes (tests/cli/test_refusals_plain.sh provokes it through "
    "libbaton); the binding maps the code like any other",
}


def test_every_class_is_provoked_or_explained():
    table = {row.cls for row in errors.CODES} | {
        baton.RevokedError,
        baton.JeopardyError,
    }
    elsewhere = {baton.UnavailableError, baton.JeopardyError}
    assert set(PROVOKE) | set(UNREACHABLE) | elsewhere == table
    assert not set(PROVOKE) & set(UNREACHABLE)


# --- The provokers: each raises its class through pytest.raises ----------------


@provokes(baton.BusyError)
def _busy(cluster, client, unique):
    name = unique()
    with baton.Client() as other, other.lock(name):
        with pytest.raises(baton.BusyError):
            client.acquire(name, wait=0)


@provokes(baton.TimedOutError)
def _timed_out(cluster, client, unique):
    name = unique()
    with baton.Client() as other, other.lock(name):
        with pytest.raises(baton.TimedOutError):
            client.acquire(name, wait=0.2)


@provokes(baton.ExpiredError)
def _expired(cluster, client, unique):
    name = unique()
    with baton.Client(ttl=1.5) as c:
        lease = c.acquire(name)
        client.revoke_session(lease.session)  # the admin ends it
        assert lease.lost.wait(5.0)
        assert lease.state == baton.LeaseState.EXPIRED
        with pytest.raises(baton.ExpiredError):
            lease.release()
        # libbaton's own answer too (the lease above answers from its state).
        with pytest.raises(baton.ExpiredError):
            c.release(name, lease.token)


@provokes(baton.NoSessionError)
def _no_session(cluster, client, unique):
    with pytest.raises(baton.NoSessionError):
        client.release_in(2**62, bytes(16), unique(), 5)


@provokes(baton.RevokedError)
def _revoked(cluster, client, unique):
    name = unique()
    lost = []
    with baton.Client(ttl=1.5, on_lock_lost=lambda n, t: lost.append((n, t))) as c:
        lease = c.acquire(name)
        client.revoke(name, lease.session, lease.token)
        assert lease.lost.wait(5.0)
        assert lease.state == baton.LeaseState.REVOKED
        assert c.session_state == baton.SessionState.LIVE  # the session lives on
        assert lost == [(name, lease.token)]
        with pytest.raises(baton.RevokedError):
            lease.guard()
        with pytest.raises(baton.RevokedError):
            lease.release()


@provokes(baton.StaleTokenError)
def _stale(cluster, client, unique):
    name = unique()
    with client.lock(name) as lease:
        with pytest.raises(baton.StaleTokenError):
            client.release(name, lease.token - 1)
        fence = baton.Fence()
        fence.admit(lease.token)
        with pytest.raises(baton.StaleTokenError):
            fence.admit(lease.token - 1)


@provokes(baton.NotHolderError)
def _not_holder(cluster, client, unique):
    with pytest.raises(baton.NotHolderError):
        client.release(unique(), 5)


@provokes(baton.PermissionDeniedError)
def _permission(cluster, client, unique):
    files = cluster.client_cert("py-lock-role")
    name = unique()
    with client.lock(name) as lease:
        with baton.Client(tls=baton.TLS(**files)) as user:
            assert user.holder(name).held  # a `lock` client may read...
            with pytest.raises(baton.PermissionDeniedError):
                user.revoke(name, lease.session, lease.token)  # ...not revoke


@provokes(baton.QuotaError)
def _quota(cluster, client, unique):
    files = cluster.client_cert("py-quota")
    first, second = unique(), unique()
    client.quota_set("py-quota", locks=1)
    try:
        with baton.Client(tls=baton.TLS(**files)) as user:
            with user.lock(first):
                with pytest.raises(baton.QuotaError, match="quota locks = 1"):
                    user.acquire(second, wait=0)
                assert client.quota_list()["py-quota"]["used"]["locks"] == 1
            # Released: the quota is free again.
            with user.lock(second):
                pass
    finally:
        client.quota_remove("py-quota")


# --- Membership and transfer refusals: each changes nothing --------------


def _member(client, other_than: int = 0):
    return next(m for m in client.status().members if m.id != other_than)


@provokes(baton.NoMemberError)
def _no_member(cluster, client, unique):
    with pytest.raises(baton.NoMemberError):
        client.member_remove(9)


@provokes(baton.IdInUseError)
def _id_in_use(cluster, client, unique):
    m = _member(client)
    with pytest.raises(baton.IdInUseError):
        client.member_add(
            m.id, f"127.0.0.1:{cluster.base + 9}", f"127.0.0.1:{cluster.base + 109}"
        )


@provokes(baton.IsLeaderError)
def _is_leader(cluster, client, unique):
    with pytest.raises(baton.IsLeaderError):
        client.transfer(client.status().leader_id)


@provokes(baton.AddressInUseError)
def _address_in_use(cluster, client, unique):
    m = _member(client)
    with pytest.raises(baton.AddressInUseError):
        client.member_add(9, m.raft_address, f"127.0.0.1:{cluster.base + 109}")


@provokes(baton.UnreachableError)
def _unreachable(cluster, client, unique):
    # Nothing runs as node 9: the leader finds no node at its raft address.
    with pytest.raises(baton.UnreachableError):
        client.member_add(
            9, f"127.0.0.1:{cluster.base + 9}", f"127.0.0.1:{cluster.base + 109}"
        )
    assert 9 not in {m.id for m in client.status().members}


@provokes(baton.InvalidNameError)
def _name(cluster, client, unique):
    with pytest.raises(baton.InvalidNameError):
        client.acquire("")


@provokes(baton.InvalidArgumentError)
def _invalid(cluster, client, unique):
    with pytest.raises(baton.InvalidArgumentError):
        client.acquire_semaphore(unique(), limit=2, permits=3)


@provokes(baton.InvalidTTLError)
def _ttl(cluster, client, unique):
    with baton.Client(ttl=0.1) as c:  # below 2 x the 300 ms election timeout
        with pytest.raises(baton.InvalidTTLError):
            c.acquire(unique())


@provokes(baton.LockDelayError)
def _delay(cluster, client, unique):
    with baton.Client(lock_delay=5.0) as c:  # the cluster allows 2 s
        with pytest.raises(baton.LockDelayError):
            c.acquire(unique())


@provokes(baton.KindError)
def _kind(cluster, client, unique):
    name = unique()
    with client.semaphore(name, limit=2):
        with pytest.raises(baton.KindError):
            client.acquire(name, owner=9)


@provokes(baton.PermitsError)
def _permits(cluster, client, unique):
    name = unique()
    with client.semaphore(name, limit=3):
        with pytest.raises(baton.PermitsError):
            client.acquire_semaphore(name, limit=4, owner=9)


@provokes(baton.HeldError)
def _held(cluster, client, unique):
    name = unique()
    with client.semaphore(name, limit=3):
        with pytest.raises(baton.HeldError):
            client.acquire_semaphore(name, limit=3)


@provokes(baton.UpgradeError)
def _upgrade(cluster, client, unique):
    name = unique()
    with client.lock_shared(name), client.lock_shared(name, owner=9):
        with pytest.raises(baton.UpgradeError):
            client.acquire(name, wait=0)


@provokes(baton.AlreadyWaitingError)
def _waiting(cluster, client, unique):
    name = unique()
    with baton.Client() as other, other.lock(name):
        t = threading.Thread(target=_expect_timeout, args=(client, name, 7))
        t.start()
        assert wait_for(lambda: client.holder(name).waiters == 1, 5.0)
        with pytest.raises(baton.AlreadyWaitingError):
            client.acquire(name, wait=1.0, owner=7)
        t.join(10)


def _expect_timeout(client, name, owner):
    with pytest.raises(baton.TimedOutError):
        client.acquire(name, wait=1.5, owner=owner)


@provokes(baton.TooManyLocksError)
def _too_many_locks(cluster, client, unique):
    prefix = unique()
    with baton.Client() as c:
        leases = [c.acquire(f"{prefix}-{i}") for i in range(64)]
        with pytest.raises(baton.TooManyLocksError):
            c.acquire(f"{prefix}-64")
        for lease in leases:
            lease.release()


@provokes(baton.TooManyWaitersError)
def _too_many_waiters(cluster, client, unique):
    name = unique()
    with baton.Client() as other, other.lock(name):
        threads = [
            threading.Thread(target=_expect_timeout, args=(client, name, 100 + i))
            for i in range(8)
        ]
        for t in threads:
            t.start()
        assert wait_for(lambda: client.holder(name).waiters == 8, 5.0)
        with pytest.raises(baton.TooManyWaitersError):
            client.acquire(name, wait=1.0, owner=200)
        for t in threads:
            t.join(10)


@provokes(baton.TooManyHoldersError)
def _too_many_holders(cluster, client, unique):
    name = unique()
    readers = [client.acquire_shared(name, owner=10 + i) for i in range(4)]
    with pytest.raises(baton.TooManyHoldersError):
        client.acquire_shared(name, owner=20)
    for lease in readers:
        lease.release()


@provokes(baton.TooManyPermitsError)
def _too_many_permits(cluster, client, unique):
    with pytest.raises(baton.TooManyPermitsError):
        client.acquire_semaphore(unique(), limit=17)


@provokes(baton.TooManyNamesError)
def _too_many_names(cluster, client, unique):
    with pytest.raises(baton.TooManyNamesError):
        client.acquire_many([unique(str(i)) for i in range(5)])


@provokes(baton.TooManySessionsError)
def _too_many_sessions(cluster, client, unique):
    clients = []
    try:
        with pytest.raises(baton.TooManySessionsError):
            for i in range(60):  # the cluster allows 48
                c = baton.Client()
                clients.append(c)
                c.acquire(unique(str(i))).release()
    finally:
        for c in clients:
            c.close()


@provokes(baton.MembershipChangeError)
def _membership(cluster, client, unique):
    # Nodes 7 and 8 never run: the leader probes a node being added for 2 s
    # before it answers UnreachableError, and refuses any other change
    # meanwhile. Two additions at once: one is probed, one refused.
    errors_seen: Dict[int, BaseException] = {}
    start = threading.Barrier(2)

    def add(id: int) -> None:
        with baton.Client(timeout=10.0) as c:
            start.wait()
            try:
                c.member_add(
                    id,
                    f"127.0.0.1:{cluster.base + id}",
                    f"127.0.0.1:{cluster.base + 100 + id}",
                )
            except baton.Error as e:
                errors_seen[id] = e

    threads = [threading.Thread(target=add, args=(id,)) for id in (7, 8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30.0)
    kinds = sorted(type(e).__name__ for e in errors_seen.values())
    assert kinds == ["MembershipChangeError", "UnreachableError"], errors_seen
    with pytest.raises(baton.MembershipChangeError):
        raise next(
            e
            for e in errors_seen.values()
            if isinstance(e, baton.MembershipChangeError)
        )
    assert not {7, 8} & {m.id for m in client.status().members}


@provokes(baton.NoAnswerError)
def _no_answer(cluster, client, unique):
    # A request that goes out on a live connection to nodes that then stop
    # answering (SIGSTOP): its outcome is unknown until the timeout.
    with baton.Client(timeout=0.5) as c:
        c.holder(unique())  # connected
        cluster.signal_all(signal.SIGSTOP)
        try:
            with pytest.raises(baton.NoAnswerError):
                c.holder(unique())
        finally:
            cluster.signal_all(signal.SIGCONT)


@provokes(baton.ConnectError)
def _connect(cluster, client, unique):
    # Nothing listens: no request can go out, the call says so at once.
    with baton.Client(free_endpoint(cluster), timeout=5.0) as c:
        with pytest.raises(baton.ConnectError) as e:
            c.try_lock(unique())
        assert "connection refused" in str(e.value)


@provokes(baton.ServerIOError)
def _io(cluster, client, unique):
    # The backup's file cannot be made.
    with pytest.raises(baton.ServerIOError):
        client.backup(cluster.dir / "no-such-dir" / "backup.snap", timeout=5.0)


@provokes(baton.TLSError)
def _tls(cluster, client, unique):
    with pytest.raises(baton.TLSError):
        baton.Client(
            tls=baton.TLS("/nonexistent/ca", "/nonexistent/c", "/nonexistent/k")
        )
    # A certificate from another CA: the nodes refuse the handshake.
    other = cluster.other_ca("other-ca")
    tls = baton.TLS(
        str(other / "ca.crt"), str(other / "admin.crt"), str(other / "admin.key")
    )
    with baton.Client(tls=tls, timeout=1.0) as c:
        with pytest.raises(baton.TLSError):
            c.try_lock(unique())


@provokes(baton.CompactedError)
def _compacted(cluster, client, unique):
    name = unique()
    with client.watch(name) as watch:
        with client.lock(name):
            pass
        first = watch.next(5.0)
    # The nodes keep the last 64 events (watch-history, conftest.py): 80
    # more push the ones after `first` out.
    for _ in range(40):
        with client.lock(name):
            pass
    with pytest.raises(baton.CompactedError):
        client.watch(name, from_position=first.position)
    client.watch(name).close()  # from now is always possible


@provokes(baton.TooManyWatchesError)
def _too_many_watches(cluster, client, unique):
    with baton.Client() as c:
        # max-watches-per-connection = 4 (conftest.py); one Client is one
        # connection.
        watches = [c.watch(unique(str(i))) for i in range(4)]
        with pytest.raises(baton.TooManyWatchesError):
            c.watch(unique("fifth"))
        watches.pop().close()

        def room() -> bool:
            try:
                watches.append(c.watch(unique("room again")))
                return True
            except baton.TooManyWatchesError:
                return False

        # A closed watch makes room. Not at once with this libbaton: its
        # UNWATCH frame comes out empty (proto_write_id() writes only
        # MEMBER_REMOVE and TRANSFER), so the node keeps the watch until
        # libbaton, seeing no answer, reconnects 3 s later (TRY_MS).
        assert wait_for(room, 10.0, step=0.1)
        for w in watches:
            w.close()


@provokes(baton.SlowError)
def _slow(cluster, client, unique):
    """libbaton keeps at most 65,536 events a watch has not taken, and then
    ends it: 512 sessions that each take 64 locks (16 multi-locks of 4) and
    close make 65,536 events under one prefix (each lock granted, then
    released by the close), in a few seconds, while the watch is not read."""
    prefix = unique() + "/"

    def sessions(i: int) -> None:
        for s in range(64):
            with baton.Client() as c:
                for k in range(16):
                    c.acquire_many([f"{prefix}{i}-{s}-{k}-{j}" for j in range(4)])

    with baton.Client() as watcher:
        watch = watcher.watch(prefix, prefix=True)
        threads = [threading.Thread(target=sessions, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        tokens = []
        for _ in range(16):  # 32 events more: the watch is cut off
            with client.lock(prefix + "last") as lease:
                tokens.append(lease.token)
        taken = 0
        with pytest.raises(baton.SlowError):
            while watch.next(5.0) is not None:
                taken += 1
        assert taken == 65536
        watch.close()
        # Resumed from the last event taken: exactly the ones after it.
        with watcher.watch(prefix, prefix=True, from_position=watch.position) as again:
            rest = [again.next(5.0) for _ in range(32)]
            assert again.next(0.3) is None
        assert [e.token for e in rest] == [t for t in tokens for _ in (1, 2)]


# After the provokers, which fill PROVOKE as they are defined.
@pytest.mark.parametrize("cls", list(PROVOKE), ids=lambda c: c.__name__)
def test_real_failure_raises(cls, cluster, client, unique):
    PROVOKE[cls](cluster, client, unique)
