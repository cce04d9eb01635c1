#!/usr/bin/env python3
"""Writes a synthetic chaos run directory (docs/chaos.md, "Run directory")
for chaos-plot's tests: RUN/plan, RUN/history/wJ.log, RUN/nemesis.log,
RUN/exits and RUN/nodes/nI/node.log, with a fault every few seconds (a
leader killed: its node's log stops leading, another node leads the next
term) and operations slower and less certain during each fault. Seeded, so
the same arguments give the same files; prints the counts it wrote as
key=value lines (ops, ok, fail, info, faults, leaders) for the test to
compare with what chaos-plot drew."""
import argparse
import datetime
import os
import random

NS = 1_000_000_000
WALL0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
MONO0 = 50 * NS  # the run's first event, on the monotonic clock
OFFSET_NS = 7 * NS  # wall clock minus monotonic (whole ms)


def stamp(mono):
    wall = WALL0 + datetime.timedelta(microseconds=(mono + OFFSET_NS) // 1000)
    return wall.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (wall.microsecond // 1000)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--workers", type=int, default=5)
    ap.add_argument("--nodes", type=int, default=3)
    ap.add_argument("--rate", type=float, default=20.0, help="ops/s per worker")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    end = MONO0 + a.seconds * NS
    os.makedirs(os.path.join(a.out, "history"), exist_ok=True)

    # Faults: kill the leader, restart it 3 s later; a new leader 0.4 s in.
    faults, leaders, exits = [], [], []
    node_log = {n: [] for n in range(1, a.nodes + 1)}
    for n in node_log:
        node_log[n].append((MONO0 - NS, "=== scripts/chaos: t=%d start: batond" % (MONO0 - NS)))
        node_log[n].append((MONO0 - NS, "%s info node %d: raft 10.0.0.%d:7001" % (stamp(MONO0 - NS), n, n)))
    term, leader, t = 2, 1, MONO0 + 2 * NS
    node_log[leader].append((MONO0 - NS // 2, "%s info serving as leader in term %d (applied 2)" % (stamp(MONO0 - NS // 2), term)))
    leaders.append(leader)
    while t + 4 * NS < end:
        f0, f1 = t, t + 3 * NS
        faults.append((f0, f1, "n%d" % leader))
        exits.append((f0 + 1000, leader))
        node_log[leader].append((f1, "=== scripts/chaos: t=%d start: batond" % f1))
        node_log[leader].append((f1 + 1000_000, "%s info node %d: raft" % (stamp(f1 + 1000_000), leader)))
        term += 1
        leader = leader % a.nodes + 1
        lt = f0 + 4 * NS // 10
        node_log[leader].append((lt, "%s info serving as leader in term %d (applied 9)" % (stamp(lt), term)))
        leaders.append(leader)
        t = f1 + rnd.randint(2, 4) * NS

    def in_fault(x):
        return any(f0 <= x < f1 for f0, f1, _ in faults)

    counts = {"ops": 0, "ok": 0, "fail": 0, "info": 0}
    gap = int(NS / a.rate)
    for w in range(1, a.workers + 1):
        p, lines, x = w * 1000, [], MONO0 + rnd.randint(0, gap)
        while x < end - NS:
            fault = in_fault(x)
            lat = int(rnd.lognormvariate(14.5, 1.0))  # about 2 ms
            r = rnd.random()
            if fault and r < 0.3:
                lat += rnd.randint(NS // 2, 2 * NS)
                typ = "info" if r < 0.1 else "fail"
            else:
                typ = "ok" if r < 0.95 else ("fail" if r < 0.998 else "info")
            lines.append("t=%d p=%d w=%d type=invoke f=acquire key=k%d wait=0" % (x, p, w, w % 3))
            err = "" if typ == "ok" else " err=BATON_EUNAVAILABLE"
            tok = " token=%d" % (x // 1000) if typ == "ok" else ""
            lines.append("t=%d p=%d w=%d type=%s f=acquire key=k%d%s%s session=%d" % (x + lat, p, w, typ, w % 3, tok, err, w))
            counts["ops"] += 1
            counts[typ] += 1
            if typ == "info":
                p += 1  # the next incarnation
            x += lat + rnd.randint(gap // 2, gap * 3 // 2)
        with open(os.path.join(a.out, "history", "w%d.log" % w), "w") as f:
            f.write("\n".join(lines) + "\n")

    with open(os.path.join(a.out, "nemesis.log"), "w") as f:
        for f0, f1, tgt in faults:
            f.write("t=%d action=start fault=kill-leader target=%s cmd=kill -9 1\n" % (f0, tgt))
            f.write("t=%d action=end fault=kill-leader target=%s cmd=batond\n" % (f1, tgt))
        f.write("t=%d action=info fault=heal-all target=all cmd=true\n" % (end - NS // 2))
    with open(os.path.join(a.out, "exits"), "w") as f:
        for t, n in exits:
            f.write("t=%d proc=node%d pid=1 status=137 expected=1\n" % (t, n))
    for n, evs in node_log.items():
        os.makedirs(os.path.join(a.out, "nodes", "n%d" % n), exist_ok=True)
        with open(os.path.join(a.out, "nodes", "n%d" % n, "node.log"), "w") as f:
            f.write("\n".join(line for _, line in sorted(evs, key=lambda e: e[0])) + "\n")
    with open(os.path.join(a.out, "plan"), "w") as f:
        f.write("seed=%d\nnemesis=kill-leader\nnodes=%d\ntime_s=%d\n" % (a.seed, a.nodes, a.seconds))
        for w in range(1, a.workers + 1):
            f.write("worker.w%d=mutex keys=1\n" % w)
    counts["faults"] = len(faults)
    counts["leaders"] = len(leaders)
    for k, v in counts.items():
        print("%s=%d" % (k, v))


main()
