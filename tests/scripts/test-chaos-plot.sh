#!/usr/bin/env bash
# Test of chaos-plot (docs/chaos.md, "Picture"), printing TAP. It draws a
# copy of the chaos-check case tests/chaos/cases/valid (with node logs in
# batond's format added, so that leaders can be placed) and counts what
# the SVG holds against the run's own files: one lane per worker with
# every operation by outcome, one band per fault with its name and target,
# the leaders' spans ending where their node went down, one latency point
# per completed operation. Then a large generated run (10 minutes, 8
# workers, thousands of operations; tests/scripts/chaos-run-gen.py):
# aggregated lanes whose counts are the generator's, its faults and
# leaders, thinned points with latency quantile lines, and a page of a
# few MB at most. And a directory that does not exist is refused. CHAOS_PLOT=path runs another chaos-plot.
set -u

root="$(cd "$(dirname "$0")/../.." && pwd)"
plot=${CHAOS_PLOT:-$PWD/tests/chaos/chaos-plot}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-chaos-plot.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# The case, with node logs as batond writes them: n2 leads term 1 from
# 0.5 s until it is killed at 2.98 s (RUN/exits), restarts at 3.15 s; n1
# leads term 2 from 3.05 s to 3.5 s. Wall clock = monotonic + 2026-01-01.
cp -r "$root/tests/chaos/cases/valid" "$tmp/valid"
chmod -R u+w "$tmp/valid"
start() { echo "=== scripts/chaos: t=$1 start: batond --config node.conf"; }
{
        start 100000000
        echo "2026-01-01T00:00:00.100Z info node 1: raft 10.199.0.1:7001"
        echo "2026-01-01T00:00:03.050Z info serving as leader in term 2 (applied 7)"
        echo "2026-01-01T00:00:03.500Z info stopped serving: now not leader in term 2"
} >"$tmp/valid/nodes/n1/node.log"
{
        start 100000000
        echo "2026-01-01T00:00:00.100Z info node 2: raft 10.199.0.2:7001"
        echo "2026-01-01T00:00:00.500Z info serving as leader in term 1 (applied 1)"
        start 3150000000
        echo "2026-01-01T00:00:03.160Z info node 2: raft 10.199.0.2:7001"
} >"$tmp/valid/nodes/n2/node.log"

"$root/tests/scripts/chaos-run-gen.py" --out "$tmp/big" --seconds 600 \
        --workers 8 --nodes 5 --rate 20 --seed 4 >"$tmp/big.counts" || exit 1

out_valid=$("$plot" "$tmp/valid" 2>"$tmp/valid.err")
rc_valid=$?
out_big=$("$plot" "$tmp/big" 2>"$tmp/big.err")
rc_big=$?
"$plot" "$tmp/no-such-run" >/dev/null 2>"$tmp/missing.err"
rc_missing=$?

exec python3 - "$tmp" "$rc_valid" "$out_valid" "$rc_big" "$out_big" \
        "$rc_missing" <<'PY'
import os
import re
import sys
import xml.etree.ElementTree as ET

tmp, rc_valid, out_valid, rc_big, out_big, rc_missing = sys.argv[1:]
SVG = "{http://www.w3.org/2000/svg}"
n = 0
failed = 0


def ok(what, cond, detail=""):
    global n, failed
    n += 1
    if cond:
        print("ok %d - %s" % (n, what))
    else:
        failed += 1
        print("not ok %d - %s" % (n, what))
        if detail:
            for line in str(detail).splitlines():
                print("# " + line)


def svgs(path):
    """The page's <svg> elements, parsed as XML: by their class."""
    text = open(path, encoding="utf-8").read()
    out = {}
    for m in re.finditer(r"<svg\b.*?</svg>", text, re.S):
        el = ET.fromstring(m.group(0))
        out[el.get("class")] = el
    return text, out


def classes(el):
    return (el.get("class") or "").split()


completed = {}


def history_counts(run):
    """Per worker: ok, fail, info (an invoke never completed is info),
    from the history files themselves; torn last lines skipped. The
    completions alone go to `completed`."""
    per = {}
    hist = os.path.join(run, "history")
    for name in sorted(os.listdir(hist)):
        data = open(os.path.join(hist, name)).read()
        lines = data.split("\n")[:-1]  # a last line without \n is torn
        pending = {}
        w = "w" + name[1:-4]
        c = per.setdefault(w, {"ok": 0, "fail": 0, "info": 0})
        done = completed.setdefault(w, {"ok": 0, "fail": 0, "info": 0})
        for line in lines:
            kv = dict(f.split("=", 1) for f in line.split(" ") if "=" in f)
            if kv.get("f") == "observe":
                continue
            if kv["type"] == "invoke":
                pending[kv["p"]] = True
            elif kv["p"] in pending:
                del pending[kv["p"]]
                c[kv["type"]] += 1
                done[kv["type"]] += 1
        c["info"] += len(pending)
    return per


def faults(run):
    out = []
    for line in open(os.path.join(run, "nemesis.log")):
        kv = dict(f.split("=", 1) for f in line.split(" cmd=")[0].split() if "=" in f)
        if kv["action"] == "start" and kv["fault"] != "heal-all":
            out.append((kv["fault"], kv["target"]))
    return sorted(out)


def count_points(svg, cls):
    return sum(len(re.findall(r"M", p.get("d")))
               for p in svg.iter(SVG + "path") if classes(p) == ["pts", cls])


# --- the fixture case: every operation drawn -------------------------------
run = os.path.join(tmp, "valid")
ok("chaos-plot draws the case (exit 0, prints the page's path)",
   rc_valid == "0" and out_valid == run + "/history.html",
   open(os.path.join(tmp, "valid.err")).read() + out_valid)
if not os.path.exists(run + "/history.html"):
    print("Bail out! no page to read")
    sys.exit(1)
text, s = svgs(run + "/history.html")
tl, lat = s.get("timeline"), s.get("latency")
ok("the page holds a timeline and a latency SVG, well-formed",
   tl is not None and lat is not None, list(s))
ok("the page loads nothing from elsewhere (no script, no link, no url())",
   not re.search(r"<script|<link|@import|url\(|https?://(?!www\.w3\.org/2000/svg)", text))
expect = history_counts(run)
lanes = {g.get("data-worker"): g for g in tl.iter(SVG + "g") if "lane" in classes(g)}
ok("one lane per worker of the history", sorted(lanes) == sorted(expect),
   "%s vs %s" % (sorted(lanes), sorted(expect)))
ok("the case is drawn op by op", tl.get("data-mode") == "ops")
for w, c in sorted(expect.items()):
    g = lanes.get(w)
    if g is None:
        continue
    drawn = {k: 0 for k in c}
    for r in g.iter(SVG + "rect"):
        if "op" in classes(r):
            drawn[classes(r)[1]] += 1
    attrs = {k: int(g.get("data-" + k)) for k in c}
    ok("%s: a bar per operation by outcome %s" % (w, c), drawn == c and attrs == c,
       "bars %s, attributes %s" % (drawn, attrs))
    titles = [r.find(SVG + "title").text for r in g.iter(SVG + "rect") if "op" in classes(r)]
    ok("%s: every bar's tooltip names its worker and operation" % w,
       all(t.startswith(w + " p") for t in titles), titles[:3])
bands = sorted((r.get("data-fault"), r.get("data-target"))
               for r in tl.iter(SVG + "rect") if classes(r) == ["fault"])
ok("one band per fault, named with its target", bands == faults(run),
   "%s vs %s" % (bands, faults(run)))
labels = sorted(t.text for t in tl.iter(SVG + "text") if classes(t) == ["fault-label"])
ok("each band is labelled with its fault and target",
   labels == sorted("%s %s" % f for f in faults(run)), labels)
ok("the final heal is a line", len([l for l in tl.iter(SVG + "line") if classes(l) == ["heal"]]) == 1)
lat_bands = [r for r in lat.iter(SVG + "rect") if classes(r) == ["fault"]]
ok("the latency plot has the same bands", len(lat_bands) == len(bands))
leaders = [(r.get("data-node"), r.get("data-term"), float(r.get("x")), float(r.get("width")))
           for r in tl.iter(SVG + "rect") if classes(r) == ["leader"]]
downs = [(r.get("data-node"), float(r.get("x")), float(r.get("width")))
         for r in tl.iter(SVG + "rect") if classes(r) == ["down"]]
ok("leaders: n2 in term 1, then n1 in term 2",
   [(a, b) for a, b, _, _ in leaders] == [("n2", "1"), ("n1", "2")], leaders)
ok("n2 is down once, from its kill to its restart", [d[0] for d in downs] == ["n2"], downs)
if len(leaders) == 2 and len(downs) == 1:
    ok("n2's leadership ends where it went down",
       abs(leaders[0][2] + leaders[0][3] - downs[0][1]) < 0.2, (leaders, downs))
    ok("n1 leads after n2's restart began and stops serving before the end",
       leaders[1][2] > downs[0][1] and leaders[1][2] + leaders[1][3] < float(tl.get("width")) - 20,
       (leaders, downs))
total = {k: sum(c[k] for c in completed.values()) for k in ("ok", "fail", "info")}
pts = {k: count_points(lat, k) for k in ("ok", "fail", "info")}
ok("one latency point per completed operation, by outcome %s" % total,
   pts == total and int(lat.get("data-ops")) == sum(pts.values()),
   "points %s, completed ops %s" % (pts, total))

# --- a large generated run: aggregated, thinned, small --------------------
run = os.path.join(tmp, "big")
gen = dict(l.strip().split("=") for l in open(os.path.join(tmp, "big.counts")))
gen = {k: int(v) for k, v in gen.items()}
ok("chaos-plot draws the large run", rc_big == "0" and out_big == run + "/history.html",
   open(os.path.join(tmp, "big.err")).read())
size = os.path.getsize(run + "/history.html")
ok("the large run's page is under 4 MB (%d bytes for %d operations)" % (size, gen["ops"]),
   size < 4 * 1024 * 1024)
text, s = svgs(run + "/history.html")
tl, lat = s["timeline"], s["latency"]
ok("the large run is aggregated", tl.get("data-mode") == "aggregate" and lat.get("data-mode") == "thinned")
lanes = [g for g in tl.iter(SVG + "g") if "lane" in classes(g)]
ok("8 lanes", len(lanes) == 8, len(lanes))
sums = {k: sum(int(g.get("data-" + k)) for g in lanes) for k in ("ok", "fail", "info")}
ok("the lanes count every generated operation by outcome",
   sums == {k: gen[k] for k in ("ok", "fail", "info")}, "%s vs %s" % (sums, gen))
ok("each lane draws its counts as stacked columns",
   all(len([p for p in g.iter(SVG + "path") if "agg" in classes(p)]) == 3 for g in lanes))
bands = [r for r in tl.iter(SVG + "rect") if classes(r) == ["fault"]]
ok("one band per generated fault (%d)" % gen["faults"], len(bands) == gen["faults"], len(bands))
leaders = [r for r in tl.iter(SVG + "rect") if classes(r) == ["leader"]]
ok("one span per generated leader (%d)" % gen["leaders"], len(leaders) == gen["leaders"], len(leaders))
pts = sum(count_points(lat, k) for k in ("ok", "fail", "info"))
ok("points thinned: %d for %d operations, each outcome present" % (pts, gen["ops"]),
   0 < pts < gen["ops"] // 2 and all(count_points(lat, k) > 0 for k in ("ok", "fail", "info")))
cells = {}
for p in lat.iter(SVG + "path"):
    if classes(p)[:1] == ["pts"]:
        xy = re.findall(r"M(\d+) (\d+)h0", p.get("d"))
        cells[classes(p)[1]] = (len(xy), len(set(xy)), len(re.findall("M", p.get("d"))))
ok("thinned: at most one point per 2 px cell and outcome",
   all(a == b == c for a, b, c in cells.values()), cells)

q = {}
for p in lat.iter(SVG + "path"):
    if classes(p)[:1] in (["q50"], ["q99"]):
        q[classes(p)[0]] = dict((x, float(y)) for x, y in re.findall(r"[ML]([\d.]+) ([\d.]+)", p.get("d")))
ok("median and 99th percentile lines, the 99th never below the median",
   set(q) == {"q50", "q99"} and len(q["q50"]) > 50 and q["q50"].keys() == q["q99"].keys() and
   all(q["q99"][x] <= q["q50"][x] for x in q["q50"]), {k: len(v) for k, v in q.items()})

# --- refusals ---------------------------------------------------------------
err = open(os.path.join(tmp, "missing.err")).read()
ok("a run directory that does not exist: exit 1 and a message naming it",
   rc_missing == "1" and "no-such-run" in err, err)

print("1..%d" % n)
sys.exit(1 if failed else 0)
PY
