#!/usr/bin/env python3
"""The HTTP API against a real TLS cluster (scripts/cluster in a scratch
directory), printing TAP: a scenario per endpoint and role (hold times
running out and extended among them), redirects from followers, exactly
once with Idempotency-Key, watches as Server-Sent Events with resume and
compaction, and malformed requests (bad JSON,
oversized bodies and headers, slowloris, wrong methods, missing or wrong
secrets, plain HTTP, no certificate) each answered with a clear error and
no effect. Last, docs/openapi.yaml is checked against every call made:
each path and method it lists was called and answered one of its listed
statuses, and no call went to an undocumented one.

Ports from $BATON_HTTP_TEST_BASE_PORT (default 26000), moved on by 1000
while busy.
"""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import yaml  # noqa: E402

from httpcase import (ROOT, Client, Cluster, leader_node,  # noqa: E402
                      main_guard, raw_exchange, status_of)


def sessions(tap, cl, lead):
    c = Client(cl, lead, "locker")
    a = c.open(ttl_ms=15000, name="sessions")
    tap.check("POST /v1/session opens a session: 201 with id and secret",
              a.status == 201 and a.get("session", 0) > 0
              and len(a.get("secret", "")) == 32, a)
    a = c.call("POST", "/v1/session/keepalive")
    tap.check("keepalive answers the TTL and the revoked count",
              a.status == 200 and a.get("ttl_ms") == 15000
              and a.get("revoked") == 0, a)
    a = c.call("POST", "/v1/session/close")
    tap.check("close answers 200 with the entry and the seq",
              a.status == 200 and a.get("index", 0) > 0
              and a.get("seq") == 1, a)
    a = c.call("POST", "/v1/session/keepalive")
    tap.check("a closed session's keepalive is 410 BATON_ECLOSED",
              a.status == 410 and a.get("error") == "BATON_ECLOSED", a)
    a = c.open(ttl_ms=1000, name="short")
    time.sleep(3.0)
    a = c.call("POST", "/v1/session/keepalive")
    tap.check("a session not kept alive expires: 410 BATON_EEXPIRED",
              a.status == 410 and a.get("error") == "BATON_EEXPIRED", a)
    c.close()


def locks(tap, cl, lead):
    a_, b_ = Client(cl, lead, "locker"), Client(cl, lead, "locker")
    a_.open(name="holder-a")
    b_.open(name="holder-b")
    g = a_.call("POST", "/v1/lock/acquire", {"name": "jobs"})
    tap.check("acquire grants with a token, the entry's index",
              g.status == 200 and g.get("token") == g.get("index")
              and g.get("count") == 1, g)
    t1 = g.get("token")
    busy = b_.call("POST", "/v1/lock/acquire", {"name": "jobs"})
    tap.check("another session's try is 409 BATON_EBUSY naming the "
              "holder's token",
              busy.status == 409 and busy.get("error") == "BATON_EBUSY"
              and busy.get("holder_token") == t1, busy)
    h = a_.call("GET", "/v1/lock/holders?name=jobs")
    hs = h.get("holders", [])
    tap.check("holders names the session, its token and client name",
              h.status == 200 and len(hs) == 1
              and hs[0]["session"] == a_.session and hs[0]["token"] == t1
              and hs[0]["client_name"] == "holder-a", h)
    left = hs[0].get("left_ms") if hs else None
    tap.check("holders gives the holder's time left, the leader's lease of "
              "its session: a number of ms within its TTL",
              isinstance(left, int) and not isinstance(left, bool)
              and 0 <= left <= 15000, h)
    ck = b_.call("GET", "/v1/lock/check?name=jobs&token=%d" % t1)
    tap.check("check of the current token says current",
              ck.status == 200 and ck.get("current") is True, ck)
    ls = b_.call("GET", "/v1/locks?prefix=jo&limit=10")
    tap.check("locks lists the lock under its prefix",
              ls.status == 200 and [x["name"] for x in ls.get("locks", [])]
              == ["jobs"] and ls.get("more") is False, ls)
    got = {}

    def wait():
        got["a"] = b_.call("POST", "/v1/lock/acquire",
                           {"name": "jobs", "wait_ms": 10000})
        got["t"] = time.time()

    th = threading.Thread(target=wait)
    th.start()
    time.sleep(1.0)
    released = time.time()
    r = a_.call("POST", "/v1/lock/release", {"name": "jobs", "token": t1})
    th.join(15)
    w = got.get("a")
    tap.check("release answers the token and no holds left",
              r.status == 200 and r.get("token") == t1 and r.get("count") == 0,
              r)
    tap.check("a blocking acquire held open is granted at the release "
              "with a higher token",
              w is not None and w.status == 200 and w.get("token", 0) > t1
              and got["t"] >= released, w)
    ck = b_.call("GET", "/v1/lock/check?name=jobs&token=%d" % t1)
    tap.check("the old token is no longer current",
              ck.status == 200 and ck.get("current") is False
              and ck.get("holder_token") == w.get("token"), ck)
    st = a_.call("POST", "/v1/lock/release", {"name": "jobs", "token": t1})
    tap.check("release with a stale token is 409",
              st.status == 409 and st.get("error") in ("BATON_ESTALE",
                                                       "BATON_ENOTHOLDER"), st)
    to = a_.call("POST", "/v1/lock/acquire", {"name": "jobs", "wait_ms": 300})
    tap.check("a wait that runs out is 409 BATON_ETIMEDOUT",
              to.status == 409 and to.get("error") == "BATON_ETIMEDOUT", to)
    sh1 = a_.call("POST", "/v1/lock/acquire", {"name": "cfg",
                                               "mode": "shared"})
    sh2 = b_.call("POST", "/v1/lock/acquire", {"name": "cfg",
                                               "mode": "shared"})
    h = a_.call("GET", "/v1/lock/holders?name=cfg")
    tap.check("two sessions share a shared lock",
              sh1.status == 200 and sh2.status == 200
              and len(h.get("holders", [])) == 2
              and {x["mode"] for x in h.get("holders")} == {"shared"}, h)
    s1 = a_.call("POST", "/v1/lock/acquire", {"name": "pool",
                                              "mode": "semaphore",
                                              "permits": 2, "limit": 3})
    s2 = b_.call("POST", "/v1/lock/acquire", {"name": "pool",
                                              "mode": "semaphore",
                                              "permits": 2, "limit": 3})
    tap.check("a semaphore grants permits up to its limit, then 409",
              s1.status == 200 and s2.status == 409, (s1, s2))
    m = a_.call("POST", "/v1/lock/acquire",
                {"locks": [{"name": "m/a"}, {"name": "m/b",
                                             "mode": "shared"}]})
    h1 = a_.call("GET", "/v1/lock/holders?name=m/a")
    h2 = a_.call("GET", "/v1/lock/holders?name=m%2Fb")
    tap.check("a multi-lock takes every name with one token",
              m.status == 200 and h1.get("holders")[0]["token"]
              == m.get("token") == h2.get("holders")[0]["token"], (m, h1, h2))
    a_.call("POST", "/v1/session/close")
    b_.call("POST", "/v1/session/close")
    a_.close()
    b_.close()


def exactly_once(tap, cl, lead):
    c = Client(cl, lead, "locker")
    c.open(name="once")
    k = {"Idempotency-Key": "50"}
    a1 = c.call("POST", "/v1/lock/acquire", {"name": "once"}, k)
    a2 = c.call("POST", "/v1/lock/acquire", {"name": "once"}, k)
    h = c.call("GET", "/v1/lock/holders?name=once")
    tap.check("a request repeated with its Idempotency-Key gets the "
              "remembered grant, not a second hold",
              a1.status == 200 and a2.status == 200
              and a1.get("token") == a2.get("token") and a2.get("seq") == 50
              and h.get("holders")[0]["count"] == 1, (a1, a2, h))
    a3 = c.call("POST", "/v1/lock/release",
                {"name": "once", "token": a1.get("token")})
    tap.check("a write without a key is numbered after the keyed ones",
              a3.status == 200 and a3.get("seq") == 51, a3)
    c.call("POST", "/v1/session/close")
    c.close()


def elections(tap, cl, lead):
    c = Client(cl, lead, "locker")
    c.open(name="candidate")
    g = c.call("POST", "/v1/election/campaign",
               {"name": "svc", "value": "10.0.0.1:80"})
    ld = c.call("GET", "/v1/election/leader?name=svc")
    tap.check("campaign leads; leader shows the value",
              g.status == 200 and ld.get("leader", {}).get("value")
              == "10.0.0.1:80" and ld.get("leader")["token"] == g.get("token"),
              (g, ld))
    p = c.call("POST", "/v1/election/proclaim",
               {"name": "svc", "token": g.get("token"),
                "value": "10.0.0.2:80"})
    ld = c.call("GET", "/v1/election/leader?name=svc")
    tap.check("proclaim changes the leader's value",
              p.status == 200 and ld.get("leader", {}).get("value")
              == "10.0.0.2:80", (p, ld))
    r = c.call("POST", "/v1/election/resign",
               {"name": "svc", "token": g.get("token")})
    ld = c.call("GET", "/v1/election/leader?name=svc")
    tap.check("resign leaves the election without a leader",
              r.status == 200 and ld.status == 200
              and ld.get("leader", 0) is None, (r, ld))
    c.call("POST", "/v1/session/close")
    c.close()


def values(tap, cl, lead):
    """A value on every grant: set at acquire (a lock's, a reader's, a
    semaphore holder's), changed by its holder with POST /v1/lock/value
    and fenced by the token, shown by holders and the watch's events."""
    import json
    a_, b_ = Client(cl, lead, "locker"), Client(cl, lead, "locker")
    a_.open(name="valued-a")
    b_.open(name="valued-b")

    def held(name):
        """The holders' values by session, and the answer."""
        h = a_.call("GET", "/v1/lock/holders?name=" + name)
        return {x["session"]: x.get("value")
                for x in h.get("holders") or []}, h

    def listed(prefix):
        """GET /v1/locks under `prefix`: each lock's value by name (None
        when the field is missing), and the answer."""
        ls = b_.call("GET", "/v1/locks?prefix=" + prefix)
        return {x["name"]: x.get("value")
                for x in ls.get("locks") or []}, ls

    g = a_.call("POST", "/v1/lock/acquire",
                {"name": "vals/x", "value": "host-a:1"})
    t = g.get("token")
    vs, h = held("vals/x")
    tap.check("an acquire's value is its grant's: holders shows it",
              g.status == 200 and vs == {a_.session: "host-a:1"}, (g, h))
    plain = b_.call("POST", "/v1/lock/acquire", {"name": "vals/plain"})
    lv, ls = listed("vals/")
    tap.check("GET /v1/locks gives each lock's value: an acquire's, and "
              "\"\" for a lock acquired without one",
              plain.status == 200 and ls.status == 200
              and lv == {"vals/x": "host-a:1", "vals/plain": ""}
              and ls.get("more") is False, (plain, ls))
    b_.call("POST", "/v1/lock/release",
            {"name": "vals/plain", "token": plain.get("token")})
    s = a_.call("POST", "/v1/lock/value",
                {"name": "vals/x", "token": t, "value": "host-a:2"})
    vs, h = held("vals/x")
    tap.check("POST /v1/lock/value with the grant's token changes it and "
              "answers the token",
              s.status == 200 and s.get("token") == t
              and s.get("count") == 1 and s.get("seq") == 2
              and vs == {a_.session: "host-a:2"}
              and h.get("holders")[0]["token"] == t, (s, h))
    lv, ls = listed("vals/x")
    tap.check("after POST /v1/lock/value GET /v1/locks lists the new value",
              ls.status == 200 and lv == {"vals/x": "host-a:2"}, ls)
    w = a_.call("POST", "/v1/lock/value",
                {"name": "vals/x", "token": t + 1000, "value": "wrong"})
    vs, h = held("vals/x")
    tap.check("a value with another token is 409 BATON_ESTALE and the "
              "value stays",
              w.status == 409 and w.get("error") == "BATON_ESTALE"
              and vs == {a_.session: "host-a:2"}, (w, h))
    o = b_.call("POST", "/v1/lock/value",
                {"name": "vals/x", "token": t, "value": "thief"})
    vs, h = held("vals/x")
    tap.check("another session's value, even with the holder's token, is "
              "409 BATON_ENOTHOLDER and the value stays",
              o.status == 409 and o.get("error") == "BATON_ENOTHOLDER"
              and vs == {a_.session: "host-a:2"}, (o, h))
    rd = Client(cl, lead, "reader")
    rd.session, rd.secret = a_.session, a_.secret
    p = rd.call("POST", "/v1/lock/value",
                {"name": "vals/x", "token": t, "value": "by a reader"})
    vs, h = held("vals/x")
    tap.check("a read client's value, in the holder's own session, is 403 "
              "BATON_EPERM and the value stays",
              p.status == 403 and p.get("error") == "BATON_EPERM"
              and vs == {a_.session: "host-a:2"}, (p, h))
    rd.close()
    before = counts(cl, lead)
    long_ = a_.call("POST", "/v1/lock/value",
                    {"name": "vals/x", "token": t, "value": "v" * 256})
    lacq = b_.call("POST", "/v1/lock/acquire",
                   {"name": "vals/long", "value": "v" * 256})
    multi = b_.call("POST", "/v1/lock/acquire",
                    {"locks": [{"name": "vals/m"}], "value": "m"})
    vs, h = held("vals/x")
    vl, hl = held("vals/long")
    vm, hm = held("vals/m")
    tap.check("a 256-byte value is 400 BATON_EINVAL naming the field, on "
              "lock.value and acquire, a multi-lock's value too; nothing "
              "changed",
              long_.status == 400 and long_.get("error") == "BATON_EINVAL"
              and "field value" in long_.get("message", "")
              and lacq.status == 400 and lacq.get("error") == "BATON_EINVAL"
              and "field value" in lacq.get("message", "")
              and multi.status == 400 and multi.get("error") == "BATON_EINVAL"
              and vs == {a_.session: "host-a:2"} and vl == {} and vm == {}
              and counts(cl, lead) == before,
              (long_, lacq, multi, h, hl, hm))
    full = a_.call("POST", "/v1/lock/value",
                   {"name": "vals/x", "token": t, "value": "f" * 255})
    vs, h = held("vals/x")
    tap.check("a 255-byte value is taken whole",
              full.status == 200 and vs == {a_.session: "f" * 255}, (full, h))
    e = a_.call("POST", "/v1/lock/value",
                {"name": "vals/x", "token": t, "value": ""})
    vs, h = held("vals/x")
    tap.check("an empty value clears it: holders shows \"\"",
              e.status == 200 and vs == {a_.session: ""}, (e, h))
    a_.call("POST", "/v1/lock/release", {"name": "vals/x", "token": t})
    g2 = b_.call("POST", "/v1/lock/acquire",
                 {"name": "vals/x", "value": "host-b:1"})
    st = a_.call("POST", "/v1/lock/value",
                 {"name": "vals/x", "token": t, "value": "host-a:3"})
    vs, h = held("vals/x")
    tap.check("the released holder's old token cannot change its "
              "successor's value (409) and holders shows the successor's",
              g2.status == 200 and g2.get("token") > t and st.status == 409
              and st.get("error") in ("BATON_ESTALE", "BATON_ENOTHOLDER")
              and vs == {b_.session: "host-b:1"}, (g2, st, h))
    r1 = a_.call("POST", "/v1/lock/acquire",
                 {"name": "vals/cfg", "mode": "shared", "value": "reader-a"})
    r2 = b_.call("POST", "/v1/lock/acquire",
                 {"name": "vals/cfg", "mode": "shared", "value": "reader-b"})
    rs = b_.call("POST", "/v1/lock/value",
                 {"name": "vals/cfg", "token": r2.get("token"),
                  "value": "reader-b:2"})
    vs, h = held("vals/cfg")
    tap.check("each reader's grant has its own value; one reader changes "
              "only its own",
              r1.status == 200 and r2.status == 200 and rs.status == 200
              and vs == {a_.session: "reader-a", b_.session: "reader-b:2"}
              and {x["mode"] for x in h.get("holders")} == {"shared"},
              (r1, r2, rs, h))
    p1 = a_.call("POST", "/v1/lock/acquire",
                 {"name": "vals/pool", "mode": "semaphore", "permits": 1,
                  "limit": 3, "value": "slot-a"})
    p2 = b_.call("POST", "/v1/lock/acquire",
                 {"name": "vals/pool", "mode": "semaphore", "permits": 2,
                  "limit": 3, "value": "slot-b"})
    ps = a_.call("POST", "/v1/lock/value",
                 {"name": "vals/pool", "token": p1.get("token"),
                  "value": "slot-a:2"})
    vs, h = held("vals/pool")
    tap.check("each semaphore holder's grant has its own value, changed "
              "by its holder",
              p1.status == 200 and p2.status == 200 and ps.status == 200
              and vs == {a_.session: "slot-a:2", b_.session: "slot-b"},
              (p1, p2, ps, h))
    c = a_.call("POST", "/v1/election/campaign",
                {"name": "vals/e", "value": "leader-1"})
    cv = a_.call("POST", "/v1/lock/value",
                 {"name": "vals/e", "token": c.get("token"),
                  "value": "leader-2"})
    ld = a_.call("GET", "/v1/election/leader?name=vals/e")
    vs, h = held("vals/e")
    tap.check("an election's leader: lock.value changes its value, which "
              "election.leader and holders both show",
              c.status == 200 and cv.status == 200
              and (ld.get("leader") or {}).get("value") == "leader-2"
              and (ld.get("leader") or {}).get("mode") == "election"
              and vs == {a_.session: "leader-2"}, (c, cv, ld, h))
    # The watch's events, read from a position before the grant: the
    # value on the grant, the new one, and "" on the release.
    g = a_.call("POST", "/v1/lock/acquire",
                {"name": "vals/w", "value": "w-1"})
    a_.call("POST", "/v1/lock/value",
            {"name": "vals/w", "token": g.get("token"), "value": "w-2"})
    a_.call("POST", "/v1/lock/release",
            {"name": "vals/w", "token": g.get("token")})
    text = raw_exchange(cl, lead, b"GET /v1/watch?name=vals/w&from=%d."
                        b"4294967295 HTTP/1.1\r\n\r\n"
                        % (g.get("index", 1) - 1), "reader", wait=1.5)
    ev = read_events(text.split("\r\n\r\n", 1)[-1])
    got = [(x["event"], json.loads(x["data"]).get("value"),
            json.loads(x["data"]).get("cause"))
           for x in ev if x["event"] != "watching"]
    tap.check("the watch's events carry the value: granted w-1, "
              "proclaimed w-2 (SET_VALUE), released \"\"",
              got == [("granted", "w-1", "ACQUIRE"),
                      ("proclaimed", "w-2", "SET_VALUE"),
                      ("released", "", "RELEASE")], text)
    a_.call("POST", "/v1/session/close")
    b_.call("POST", "/v1/session/close")
    a_.close()
    b_.close()


def holds(tap, cl, lead):
    """Hold times: an acquire's hold_ms, POST /v1/lock/extend fenced by the
    token (409 for another token or session, 400 for a grant without a
    hold time or a hold over max-hold-ms), and a short hold that ends on
    its own: a waiter gets the lock with a higher token, the holder's
    keepalive counts it and the watch names the cause EXPIRE_HOLD."""
    import json
    a_, b_ = Client(cl, lead, "locker"), Client(cl, lead, "locker")
    a_.open(name="hold-a")
    b_.open(name="hold-b")

    def held(name):
        """The holders' tokens by session, and the answer."""
        h = b_.call("GET", "/v1/lock/holders?name=" + name)
        return {x["session"]: x.get("token")
                for x in h.get("holders") or []}, h

    g = a_.call("POST", "/v1/lock/acquire",
                {"name": "holds/x", "hold_ms": 60000, "value": "job 1"})
    t = g.get("token")
    hs, h = held("holds/x")
    tap.check("an acquire with hold_ms grants with a token, and holders "
              "shows the grant",
              g.status == 200 and t == g.get("index") and hs == {a_.session: t}
              and h.get("holders")[0].get("value") == "job 1", (g, h))
    e = a_.call("POST", "/v1/lock/extend",
                {"name": "holds/x", "token": t, "hold_ms": 90000})
    hs, h = held("holds/x")
    tap.check("POST /v1/lock/extend with the grant's token restarts its "
              "hold time: 200 with the token, the count and the seq; the "
              "grant stays",
              e.status == 200 and e.get("token") == t and e.get("count") == 1
              and e.get("seq") == 2 and e.get("index", 0) > t
              and hs == {a_.session: t}, (e, h))
    w = a_.call("POST", "/v1/lock/extend",
                {"name": "holds/x", "token": t + 1000, "hold_ms": 90000})
    o = b_.call("POST", "/v1/lock/extend",
                {"name": "holds/x", "token": t, "hold_ms": 90000})
    hs, h = held("holds/x")
    tap.check("an extend with another token is 409 BATON_ESTALE, from "
              "another session 409 BATON_ENOTHOLDER; the grant stays",
              w.status == 409 and w.get("error") == "BATON_ESTALE"
              and o.status == 409 and o.get("error") == "BATON_ENOTHOLDER"
              and hs == {a_.session: t}, (w, o, h))
    before = counts(cl, lead)
    over = a_.call("POST", "/v1/lock/extend",
                   {"name": "holds/x", "token": t, "hold_ms": 86400001})
    zero = a_.call("POST", "/v1/lock/extend",
                   {"name": "holds/x", "token": t, "hold_ms": 0})
    big = b_.call("POST", "/v1/lock/acquire",
                  {"name": "holds/big", "hold_ms": 86400001})
    multi = b_.call("POST", "/v1/lock/acquire",
                    {"locks": [{"name": "holds/m"}], "hold_ms": 1000})
    hb_, hbig = held("holds/big")
    tap.check("a hold over max-hold-ms is 400 BATON_EINVAL on extend and "
              "acquire, 0 on extend and a multi-lock's too; nothing taken",
              all(x.status == 400 and x.get("error") == "BATON_EINVAL"
                  for x in (over, zero, big, multi))
              and "field hold_ms" in zero.get("message", "")
              and hb_ == {} and counts(cl, lead) == before,
              (over, zero, big, multi, hbig))
    p = b_.call("POST", "/v1/lock/acquire", {"name": "holds/plain"})
    pe = b_.call("POST", "/v1/lock/extend",
                 {"name": "holds/plain", "token": p.get("token"),
                  "hold_ms": 5000})
    hs, h = held("holds/plain")
    tap.check("extending a grant acquired without a hold time is 400 "
              "BATON_EINVAL, and it stays held",
              p.status == 200 and pe.status == 400
              and pe.get("error") == "BATON_EINVAL"
              and hs == {b_.session: p.get("token")}, (p, pe, h))
    # A short hold, extended at once to a long one: it must outlive the
    # short hold of holds/short below, which runs out first.
    k = a_.call("POST", "/v1/lock/acquire",
                {"name": "holds/kept", "hold_ms": 1500})
    ke = a_.call("POST", "/v1/lock/extend",
                 {"name": "holds/kept", "token": k.get("token"),
                  "hold_ms": 60000})
    s = a_.call("POST", "/v1/lock/acquire",
                {"name": "holds/short", "hold_ms": 1500})
    ts = s.get("token")
    # b waits (up to a generous 20 s) for the lock a's hold gives up.
    bw = b_.call("POST", "/v1/lock/acquire",
                 {"name": "holds/short", "wait_ms": 20000})
    hs, h = held("holds/short")
    ka = a_.call("POST", "/v1/session/keepalive")
    late = a_.call("POST", "/v1/lock/extend",
                   {"name": "holds/short", "token": ts, "hold_ms": 60000})
    tap.check("a 1500 ms hold ends on its own: the waiter gets the lock "
              "with a higher token, the holder's session lives and counts "
              "it as revoked, and its extend comes too late (409 "
              "BATON_ENOTHOLDER)",
              s.status == 200 and bw.status == 200
              and bw.get("token", 0) > ts and hs == {b_.session:
                                                     bw.get("token")}
              and ka.status == 200 and ka.get("revoked", 0) >= 1
              and late.status == 409
              and late.get("error") == "BATON_ENOTHOLDER",
              (s, bw, h, ka, late))
    hs, h = held("holds/kept")
    tap.check("a short hold extended at once to a long one outlives it",
              k.status == 200 and ke.status == 200
              and hs == {a_.session: k.get("token")}, (k, ke, h))
    text = raw_exchange(cl, lead, b"GET /v1/watch?name=holds/short&from=%d."
                        b"4294967295 HTTP/1.1\r\n\r\n" % (ts - 1), "reader",
                        wait=1.5)
    ev = [(x["event"], json.loads(x["data"]))
          for x in read_events(text.split("\r\n\r\n", 1)[-1])
          if x["event"] != "watching"]
    tap.check("the watch names the hold's end: released with cause "
              "EXPIRE_HOLD, then the waiter's grant",
              [(k_, d["token"]) for k_, d in ev]
              == [("granted", ts), ("released", ts),
                  ("granted", bw.get("token"))]
              and ev[1][1]["cause"] == "EXPIRE_HOLD", text)
    a_.call("POST", "/v1/session/close")
    b_.call("POST", "/v1/session/close")
    a_.close()
    b_.close()


def revokes(tap, cl, lead):
    c = Client(cl, lead, "locker")
    c.open(name="revoked")
    g = c.call("POST", "/v1/lock/acquire", {"name": "rv"})
    adm = Client(cl, lead, "admin")
    no = Client(cl, lead, "locker")
    d = no.call("POST", "/v1/lock/revoke", {"name": "rv", "session":
                                            c.session,
                                            "token": g.get("token")})
    tap.check("a lock client's revoke is 403 BATON_EPERM",
              d.status == 403 and d.get("error") == "BATON_EPERM", d)
    r = adm.call("POST", "/v1/lock/revoke", {"name": "rv", "session":
                                             c.session,
                                             "token": g.get("token")})
    h = adm.call("GET", "/v1/lock/holders?name=rv")
    k = c.call("POST", "/v1/session/keepalive")
    tap.check("an admin's lock revoke ends the grant; the session lives "
              "and counts it",
              r.status == 200 and h.get("holders") == []
              and k.status == 200 and k.get("revoked") == 1, (r, h, k))
    r = adm.call("POST", "/v1/session/revoke", {"session": c.session})
    k = c.call("POST", "/v1/session/keepalive")
    tap.check("an admin's session revoke ends the session",
              r.status == 200 and k.status == 410, (r, k))
    for x in (c, adm, no):
        x.close()


def roles(tap, cl, lead):
    reads = ["/v1/status", "/v1/lock/holders?name=a",
             "/v1/lock/check?name=a&token=1", "/v1/locks",
             "/v1/election/leader?name=a"]
    rd = Client(cl, lead, "reader")
    ok = [rd.call("GET", p).status for p in reads]
    tap.check("a read client reads every GET endpoint",
              ok == [200] * len(reads), ok)
    a = rd.open(name="reader")
    tap.check("a read client cannot open a session: 403 BATON_EPERM",
              a.status == 403 and a.get("error") == "BATON_EPERM", a)
    nb = Client(cl, lead, "nobody")
    a = nb.call("GET", "/v1/lock/holders?name=a")
    b = nb.call("POST", "/v1/session", {"ttl_ms": 5000}, session=False)
    tap.check("a client of role none is refused reads and writes",
              a.status == 403 and b.status == 403, (a, b))
    lk = Client(cl, lead, "locker")
    a = lk.call("GET", "/v1/lock/holders?name=a")
    tap.check("a lock client reads too", a.status == 200, a)
    log = open(os.path.join(cl.state, "node%d.log" % lead)).read()
    tap.check("refusals are logged with the identity, as on the client "
              "port", "'reader'" in log and "refused" in log,
              log[-2000:])
    for x in (rd, nb, lk):
        x.close()


def session_listing(tap, cl, lead):
    """GET /v1/sessions pages by id; GET /v1/sessions/{id} shows one with
    its lock and token; ended or unknown ones are named."""
    a_, b_ = Client(cl, lead, "locker"), Client(cl, lead, "locker")
    a_.open(ttl_ms=15000, name="listed-a", lock_delay_ms=250)
    b_.open(ttl_ms=12000, name="listed-b")
    g = a_.call("POST", "/v1/lock/acquire", {"name": "listed"})
    rd = Client(cl, lead, "reader")
    seen, after, pages = {}, 0, 0
    while True:
        p = rd.call("GET", "/v1/sessions?limit=1&after=%d" % after)
        pages += 1
        if p.status != 200 or pages > 100:
            break
        for s in p.get("sessions", []):
            seen[s["session"]] = s
        after = p.get("next", 0)
        if after == 0:
            break
    tap.check("GET /v1/sessions?limit=1 pages through every session by id",
              p.status == 200 and a_.session in seen and b_.session in seen
              and pages >= 2, (p, pages, sorted(seen)))
    s = seen.get(a_.session, {})
    tap.check("a listed session: its client name, TTL, lock-delay, time "
              "left", s.get("client_name") == "listed-a"
              and s.get("ttl_ms") == 15000 and s.get("lock_delay_ms") == 250
              and 0 <= (s.get("left_ms") or -1) <= 15000, s)
    i = rd.call("GET", "/v1/sessions/%d" % a_.session)
    locks = i.get("locks", [])
    tap.check("GET /v1/sessions/{id}: its lock with the grant's token",
              i.status == 200 and i.get("session") == a_.session
              and len(locks) == 1 and locks[0].get("name") == "listed"
              and locks[0].get("token") == g.get("token"), (i, g))
    b_.call("POST", "/v1/session/close")
    i = rd.call("GET", "/v1/sessions/%d" % b_.session)
    tap.check("a closed session is 410 BATON_ECLOSED",
              i.status == 410 and i.get("error") == "BATON_ECLOSED", i)
    i = rd.call("GET", "/v1/sessions/987654321")
    tap.check("no such session: 404 BATON_ENOSESSION",
              i.status == 404 and i.get("error") == "BATON_ENOSESSION", i)
    i = rd.call("GET", "/v1/sessions?limit=101")
    tap.check("a limit over 100 is 400", i.status == 400, i)
    nb = Client(cl, lead, "nobody")
    i = nb.call("GET", "/v1/sessions")
    tap.check("a client of role none may not list sessions: 403",
              i.status == 403 and i.get("error") == "BATON_EPERM", i)
    a_.call("POST", "/v1/session/close")  # leaves nothing for later steps
    for x in (a_, b_, rd, nb):
        x.close()


def followers(tap, cl, lead):
    f = [n for n in (1, 2, 3) if n != lead][0]
    c = Client(cl, f, "locker")
    a = c.call("POST", "/v1/session", {"ttl_ms": 5000}, session=False)
    tap.check("a follower redirects a write to the leader's API (307)",
              a.status == 307 and a.headers.get("Location", "").endswith(
                  ":%d/v1/session" % cl.http_port(lead))
              and a.get("error") == "BATON_ENOTLEADER", (a, a.headers))
    a = c.call("GET", "/v1/status")
    tap.check("a follower answers its own status",
              a.status == 200 and a.get("role") == "follower"
              and a.get("leader_id") == lead, a)
    c.close()


def read_events(text):
    """The SSE events of `text`: a list of dicts of their fields."""
    events = []
    for block in text.split("\n\n"):
        ev = {}
        for line in block.split("\n"):
            if ": " in line:
                k, v = line.split(": ", 1)
                ev[k] = v
        if "event" in ev:
            events.append(ev)
    return events


def watches(tap, cl, lead):
    import json
    c = Client(cl, lead, "locker")
    c.open(name="watched")
    out = {}
    req = (b"GET /v1/watch?name=w HTTP/1.1\r\nHost: x\r\n\r\n")

    def watch():
        out["text"] = raw_exchange(cl, lead, req, "reader", wait=4.0)

    th = threading.Thread(target=watch)
    th.start()
    time.sleep(1.0)
    g = c.call("POST", "/v1/lock/acquire", {"name": "w"})
    c.call("POST", "/v1/lock/release", {"name": "w", "token": g.get("token")})
    th.join(10)
    text = out.get("text", "")
    ev = read_events(text.split("\r\n\r\n", 1)[-1])
    kinds = [e["event"] for e in ev]
    tap.check("a watch is an event stream: watching, granted, released",
              text.startswith("HTTP/1.1 200")
              and "text/event-stream" in text
              and kinds == ["watching", "granted", "released"]
              and json.loads(ev[1]["data"])["token"] == g.get("token"), text)
    first = ev[1]["id"] if len(ev) > 1 else "0.0"
    text = raw_exchange(cl, lead,
                        b"GET /v1/watch?name=w HTTP/1.1\r\nLast-Event-ID: "
                        + first.encode() + b"\r\n\r\n", "reader", wait=1.5)
    ev = read_events(text.split("\r\n\r\n", 1)[-1])
    tap.check("Last-Event-ID resumes after that event, with no gap or "
              "repeat", [e["event"] for e in ev] == ["watching", "released"],
              text)
    for i in range(12):  # past watch-history = 16 events
        g = c.call("POST", "/v1/lock/acquire", {"name": "w"})
        c.call("POST", "/v1/lock/release",
               {"name": "w", "token": g.get("token")})
    text = raw_exchange(cl, lead,
                        b"GET /v1/watch?name=w&from=" + first.encode()
                        + b" HTTP/1.1\r\n\r\n", "reader", wait=1.5)
    tap.check("a position whose events are gone is 410 BATON_ECOMPACTED",
              status_of(text) == 410 and "BATON_ECOMPACTED" in text, text)
    c.call("POST", "/v1/session/close")
    c.close()


def counts(cl, lead):
    c = Client(cl, lead, "admin")
    a = c.call("GET", "/v1/status")
    c.close()
    return (a.get("sessions"), a.get("locks"), a.get("waiters"))


def malformed(tap, cl, lead):
    before = counts(cl, lead)
    c = Client(cl, lead, "locker")
    a = c.call("POST", "/v1/session", "{\"ttl_ms\": ", session=False)
    tap.check("bad JSON is 400 BATON_EINVAL saying where",
              a.status == 400 and "not JSON" in a.get("message", ""), a)
    a = c.call("POST", "/v1/session", {"ttl_ms": 5000, "tll": 1},
               session=False)
    tap.check("an unknown field is 400 naming it",
              a.status == 400 and "tll" in a.get("message", ""), a)
    c.close()
    big = b"{\"client_name\": \"" + b"x" * 2000 + b"\"}"
    text = raw_exchange(cl, lead, b"POST /v1/session HTTP/1.1\r\n"
                        b"Content-Length: %d\r\n\r\n" % len(big) + big)
    tap.check("an oversized body is 413 and the connection closes",
              status_of(text) == 413 and "Connection: close" in text, text)
    text = raw_exchange(cl, lead, b"GET /v1/status HTTP/1.1\r\nX-Pad: "
                        + b"p" * 1500 + b"\r\n\r\n")
    tap.check("oversized headers are 431", status_of(text) == 431, text)
    t0 = time.time()
    text = raw_exchange(cl, lead, [b"POST /v1/session HTTP/1.1\r\nConte",
                                   b"nt-Length: 2\r\n"], pause_after=0.3,
                        wait=5.0)
    tap.check("a request that trickles in (slowloris) is 408 within the "
              "request timeout, and closed",
              status_of(text) == 408 and time.time() - t0 < 4.5, text)
    text = raw_exchange(cl, lead, b"PUT /v1/lock/acquire HTTP/1.1\r\n"
                        b"Content-Length: 0\r\n\r\n")
    tap.check("a wrong method is 405 naming it",
              status_of(text) == 405 and "PUT" in text, text)
    text = raw_exchange(cl, lead, b"POST /v1/lock/acquire HTTP/1.1\r\n"
                        b"Content-Length: 12\r\n\r\n{\"name\":\"m\"}")
    tap.check("a session call without its secret is 401",
              status_of(text) == 401 and "Baton-Secret" in text, text)
    o = Client(cl, lead, "locker")
    o.open(name="owner")
    thief = Client(cl, lead, "locker")
    thief.session, thief.secret = o.session, "0" * 32
    a = thief.call("POST", "/v1/lock/acquire", {"name": "stolen"})
    h = o.call("GET", "/v1/lock/holders?name=stolen")
    tap.check("a wrong secret is 403 and takes nothing",
              a.status == 403 and "secret" in a.get("message", "")
              and h.get("holders") == [], (a, h))
    o.call("POST", "/v1/session/close")
    o.close()
    thief.close()
    import socket
    s = socket.create_connection(("127.0.0.1", cl.http_port(lead)), timeout=5)
    s.sendall(b"GET /v1/status HTTP/1.1\r\n\r\n")
    plain = s.recv(4096).decode("utf-8", "replace")
    s.close()
    tap.check("plain HTTP on the TLS port is a plain 400 saying TLS",
              status_of(plain) == 400 and "TLS" in plain, plain)
    text = raw_exchange(cl, lead, b"GET /v1/status HTTP/1.1\r\n\r\n",
                        who=None, wait=3.0)
    tap.check("a client without a certificate is refused at the handshake",
              status_of(text) == 0, text)
    text = raw_exchange(cl, lead, [b"POST /v1/session HTTP/1.1\r\n"
                                   b"Expect: 100-continue\r\n"
                                   b"Content-Length: 17\r\n\r\n",
                                   b"{\"ttl_ms\": 15000}"], pause_after=0.3)
    tap.check("Expect: 100-continue gets the go-ahead before the body, "
              "then the answer",
              text.startswith("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201"),
              text)
    s_ = Client(cl, lead, "admin")
    s_.session = int(text.split("\"session\":")[1].split(",")[0]) \
        if "\"session\":" in text else 0
    s_.secret = text.split("\"secret\":\"")[1][:32] \
        if "\"secret\":\"" in text else "0" * 32
    s_.call("POST", "/v1/session/close")
    s_.close()
    text = raw_exchange(cl, lead, b"\x00\x01garbage\r\n\r\n")
    tap.check("garbage is a 4xx and the connection closes",
              400 <= status_of(text) < 500, text)
    text = raw_exchange(cl, lead, b"GET /v1/status HTTP/1.1\r\n\r\n"
                        b"GET /v1/locks HTTP/1.1\r\nConnection: close\r\n\r\n")
    tap.check("pipelined requests are answered in order",
              text.count("HTTP/1.1 200") == 2
              and text.index("\"role\"") < text.index("\"locks\""), text)
    after = counts(cl, lead)
    tap.check("none of the malformed requests changed the state",
              before == after, (before, after))


def compare(spec, calls):
    """What disagrees between the spec and the calls made: calls to
    undocumented endpoints, statuses not documented for their call, and
    documented calls never made with success."""
    documented = {}
    for path, ops in spec.get("paths", {}).items():
        for method, op in ops.items():
            documented[(method.upper(), path)] = {
                int(s) for s in op.get("responses", {}) if s.isdigit()}
    made = set(calls)
    unknown = sorted({(m, p) for (m, p, s) in made if p.startswith("/v1/")
                      and (m, p) not in documented})
    undocumented = sorted({(m, p, s) for (m, p, s) in made
                           if (m, p) in documented
                           and s not in documented[(m, p)]})
    missed = sorted(k for k in documented
                    if not any(m == k[0] and p == k[1] and 200 <= s < 300
                               for (m, p, s) in made))
    return unknown, undocumented, missed, len(documented)


def metrics(tap, cl, lead):
    import urllib.request
    url = "http://127.0.0.1:%d/metrics" % (cl.base + 200 + lead)
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    got = {}
    for line in text.splitlines():
        if line.startswith("baton_http_"):
            k, v = line.split(" ", 1)
            got[k] = float(v)
    tap.check("/metrics counts the API's requests and refusals",
              got.get("baton_http_requests_total", 0) > 50
              and got.get("baton_http_refused_total", 0) >= 5
              and got.get("baton_http_connections_timed_out_total", 0) >= 1
              and "baton_http_connections" in got, got)


def openapi(tap):
    import copy
    with open(os.path.join(ROOT, "docs", "openapi.yaml")) as f:
        spec = yaml.safe_load(f)
    unknown, undocumented, missed, n = compare(spec, Client.calls)
    tap.check("openapi.yaml lists every endpoint the tests called",
              not unknown, unknown)
    tap.check("every status the tests met is in openapi.yaml for its call",
              not undocumented, undocumented)
    tap.check("every path and method of openapi.yaml was called and "
              "succeeded (%d)" % n, not missed, missed)
    # Negative controls: the comparison fails on a spec that lacks a path,
    # lacks a status the server gave, or lists a path no call reached.
    broken = copy.deepcopy(spec)
    del broken["paths"]["/v1/locks"]
    del broken["paths"]["/v1/lock/acquire"]["post"]["responses"]["409"]
    broken["paths"]["/v1/lock/steal"] = {"post": {"responses": {"200": {}}}}
    unknown, undocumented, missed, n = compare(broken, Client.calls)
    tap.check("control: a spec missing a path, a status and with an extra "
              "path is caught on all three",
              ("GET", "/v1/locks") in unknown
              and any(p == "/v1/lock/acquire" and s == 409
                      for (m, p, s) in undocumented)
              and ("POST", "/v1/lock/steal") in missed,
              (unknown, undocumented, missed))


def scenario(tap):
    cl = Cluster("BATON_HTTP_TEST_BASE_PORT",
                 ["http-request-timeout-ms = 1000", "watch-history = 16",
                  "http-max-body-bytes = 1024",
                  "http-max-header-bytes = 1024",
                  "min-ttl-ms = 1000"])
    try:
        up = cl.up()
        tap.check("a TLS cluster with the HTTP API starts", True, up.stdout)
        lead = leader_node(cl)
        # A quiet watch on a follower for the whole run: its stream must
        # carry the 15 s heartbeat comment.
        quiet = {}
        other = [n for n in (1, 2, 3) if n != lead][0]
        hb = threading.Thread(target=lambda: quiet.update(text=raw_exchange(
            cl, other, b"GET /v1/watch?name=quiet HTTP/1.1\r\n\r\n",
            "reader", wait=17.0)))
        hb.start()
        for step in (sessions, locks, exactly_once, elections, values,
                     holds, revokes, roles, session_listing, followers,
                     watches, malformed, metrics):
            step(tap, cl, lead)
        hb.join(30)
        tap.check("a quiet event stream gets a heartbeat comment within 17 s",
                  "\n: heartbeat\n" in quiet.get("text", ""),
                  quiet.get("text", "")[-500:])
        # The watch stream counts as a call of GET /v1/watch.
        Client.calls.append(("GET", "/v1/watch", 200))
        openapi(tap)
    finally:
        reports = cl.down()
    tap.check("the nodes' logs hold no sanitizer report (the sanitizer "
              "build's batond, run by this test in its build directory)",
              not reports, "\n".join(reports[:20]))


if __name__ == "__main__":
    main_guard(scenario)
