"""Leadership transfer and membership changes through the binding."""

from __future__ import annotations

import pytest

import baton

from conftest import wait_for


def leader_id(client: baton.Client) -> int:
    try:
        return client.status().leader_id
    except (baton.ClusterUnavailable, baton.ServerIOError):
        return 0  # between two leaders


def test_transfer_moves_the_leadership(cluster, client):
    before = client.status()
    target = next(m.id for m in before.members if m.id != before.id)
    assert client.transfer(target) == target
    assert wait_for(lambda: leader_id(client) == target, 10.0, step=0.1)
    client.transfer()  # to any voter
    assert wait_for(lambda: leader_id(client) not in (0, target), 10.0, step=0.1)


def test_member_add_of_a_node_that_does_not_run(cluster):
    raft = f"127.0.0.1:{cluster.base + 9}"
    serve = f"127.0.0.1:{cluster.base + 109}"
    with baton.Client(timeout=5.0) as c:
        # Nothing runs as node 9: the leader finds no node at its raft
        # address (it tries for 2 s) and changes nothing.
        with pytest.raises(baton.UnreachableError):
            c.member_add(9, raft, serve)
        assert 9 not in {m.id for m in c.status().members}
        with pytest.raises(baton.NoMemberError):
            c.member_remove(9)
        assert len(c.status().members) == 3


def test_backup_and_inspect(client, unique, tmp_path):
    name = unique("backup")
    with client.lock(name) as grant:
        info = client.backup(tmp_path / "cluster.bak")
        assert info.locks >= 1 and info.grants >= 1 and info.sessions >= 1
        assert info.index >= grant.token  # every token so far is at most it
    assert baton.backup_inspect(tmp_path / "cluster.bak") == info
    assert not (tmp_path / "cluster.bak.part").exists()
    data = bytearray((tmp_path / "cluster.bak").read_bytes())
    data[-1] ^= 0x01
    (tmp_path / "changed.bak").write_bytes(bytes(data))
    try:
        baton.backup_inspect(tmp_path / "changed.bak")
    except baton.CorruptError:
        pass
    else:
        raise AssertionError("a changed byte was not noticed")


def test_access_list(client):
    acl = client.acl_list()
    assert acl["seeded"] and acl["rules"].get("admin") == "admin"
    client.acl_add("py-probe", "read")
    assert client.acl_list()["rules"]["py-probe"] == "read"
    client.acl_remove("py-probe")
    assert "py-probe" not in client.acl_list()["rules"]
    with pytest.raises(baton.NotFoundError):
        client.acl_remove("py-probe")
    with pytest.raises(ValueError):
        client.acl_add("py-probe", "root")


def test_rules_on_names(client):
    assert client.rule_list() == []
    client.rule_add("group:py-team", "py-team/", ["lock"])
    try:
        assert client.rule_list() == [
            {
                "subject": "py-team",
                "group": True,
                "prefix": "py-team/",
                "perms": ["read", "lock"],
            }
        ]
    finally:
        client.rule_remove("group:py-team", "py-team/")
    assert client.rule_list() == []
    with pytest.raises(baton.NotFoundError):
        client.rule_remove("group:py-team", "py-team/")
    with pytest.raises(ValueError):
        client.rule_add("py-probe", "x/", ["root"])


def test_quotas(client):
    client.quota_set("py-probe", sessions=2, locks=10)
    try:
        q = client.quota_list()["py-probe"]
        assert q["limits"] == {
            "sessions": 2,
            "locks": 10,
            "waiters": 0,
            "watches": 0,
            "rate": 0,
        }
        assert q["used"] == {"sessions": 0, "locks": 0, "waiters": 0}
    finally:
        client.quota_remove("py-probe")
    assert "py-probe" not in client.quota_list()
    with pytest.raises(baton.NotFoundError):
        client.quota_remove("py-probe")
    with pytest.raises(baton.InvalidArgumentError):
        client.quota_set("py-probe")  # limits nothing
    with pytest.raises(ValueError):
        client.quota_set("py-probe", requests=5)
