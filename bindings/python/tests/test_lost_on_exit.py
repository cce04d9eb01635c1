"""A lock an administrator revokes inside a `with` or `async with` block
surfaces as a `baton.LockLost` (a RevokedError) when the block ends,
whether the revoke reached the client before the release (at a
keepalive) or the release is the first to hear of it (the cluster answers
BATON_ENOTHOLDER while the session lives). The idiom docs/python.md
teaches, `except baton.LockLost`, must catch both."""

from __future__ import annotations

import asyncio

import pytest

import baton

# A long TTL: the client's keepalives come TTL/3 apart, so a revoke made
# and followed at once by the end of the block is not heard of before it.
UNHEARD_TTL = 60.0


def test_async_with_revoke_not_yet_heard(client, unique):
    name = unique()

    async def main():
        async with baton.Client(ttl=UNHEARD_TTL) as c:
            with pytest.raises(baton.LockLost) as caught:
                async with c.lock(name) as lease:
                    client.revoke(name, lease.session, lease.token)
                    # The premise: the client has not heard of it yet.
                    assert lease.state == baton.LeaseState.LIVE
            return lease, caught.value

    lease, err = asyncio.run(main())
    assert isinstance(err, baton.RevokedError), repr(err)
    assert isinstance(err, baton.NotHolderError)  # what it was before, too
    assert err.code == baton.NotHolderError.code
    assert lease.state == baton.LeaseState.REVOKED
    assert not client.holder(name).held


def test_with_revoke_not_yet_heard(client, unique):
    name = unique()
    with baton.Client(ttl=UNHEARD_TTL) as c:
        with pytest.raises(baton.LockLost) as caught:
            with c.lock(name) as lease:
                client.revoke(name, lease.session, lease.token)
                assert lease.state == baton.LeaseState.LIVE
    assert isinstance(caught.value, baton.RevokedError)
    assert lease.state == baton.LeaseState.REVOKED


def test_async_with_revoke_heard_first(client, unique):
    """The other order, which already raised a LockLost: the revoke reaches
    the client (a short TTL, so a keepalive comes soon) before the block
    ends."""
    name = unique()

    async def main():
        async with baton.Client(ttl=1.5) as c:
            with pytest.raises(baton.LockLost) as caught:
                async with c.lock(name) as lease:
                    client.revoke(name, lease.session, lease.token)
                    assert await asyncio.to_thread(lease.lost.wait, 10.0)
            return caught.value

    assert isinstance(asyncio.run(main()), baton.RevokedError)


def test_leadership_revoke_not_yet_heard(client, unique):
    """A leadership is a lease: resigning one revoked meanwhile is a
    LockLost too."""
    name = unique()

    async def main():
        async with baton.Client(ttl=UNHEARD_TTL) as c:
            with pytest.raises(baton.LockLost) as caught:
                async with c.campaign(name, "v") as lead:
                    client.revoke(name, lead.session, lead.token)
                    assert lead.state == baton.LeaseState.LIVE
            return caught.value

    assert isinstance(asyncio.run(main()), baton.RevokedError)


def test_a_second_release_is_still_not_holder(client, unique):
    """Negative control: a lease released twice is NotHolderError, not a
    LockLost: nothing was lost."""
    name = unique()
    lease = client.acquire(name)
    lease.release()
    with pytest.raises(baton.NotHolderError) as caught:
        lease.release()
    assert not isinstance(caught.value, baton.LockLost)
