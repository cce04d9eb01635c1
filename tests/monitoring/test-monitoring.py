#!/usr/bin/env python3
"""The monitoring files of deploy/ against a live cluster, printing TAP.

- deploy/prometheus/baton-alerts.yml passes `promtool check rules`, and
  its unit tests (baton-alerts.test.yml) pass `promtool test rules`; a
  copy whose BatonNoLeader can never fire makes those tests fail (the
  negative control: the tests can tell a broken rule).
- Every expression of the alert rules and of the Grafana dashboard
  (deploy/grafana/baton-dashboard.json) is valid PromQL, and names only
  metrics that batond exports: each name is looked up in the metrics of a
  live 3-node TLS cluster (every node's, since some are the leader's
  only). An expression naming a metric no node exports is reported (the
  negative control of that check).
- The scraped text passes `promtool check metrics` (Prometheus' naming
  and format lint), and deploy/prometheus/prometheus.yml passes
  `promtool check config` with the cluster's certificates.

Needs promtool (Debian's prometheus package; scripts/setup installs it):
without it the test fails rather than skips.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "http"))
import httpcase  # noqa: E402

ROOT = httpcase.ROOT
RULES = os.path.join(ROOT, "deploy", "prometheus", "baton-alerts.yml")
RULE_TESTS = os.path.join(ROOT, "deploy", "prometheus",
                          "baton-alerts.test.yml")
DASHBOARD = os.path.join(ROOT, "deploy", "grafana", "baton-dashboard.json")

# Series Prometheus makes itself, not batond.
MADE_BY_PROMETHEUS = {"up"}
# PromQL words that look like metric names: functions, aggregations,
# keywords, and the units of durations.
PROMQL_WORDS = {
    "abs", "absent", "and", "avg", "bool", "by", "ceil", "count", "floor",
    "group_left", "group_right", "histogram_quantile", "ignoring",
    "increase", "irate", "label_values", "max", "min", "offset", "on", "or",
    "rate", "round", "scalar", "sum", "time", "topk", "unless", "vector",
    "without", "delta", "deriv", "clamp_min", "clamp_max", "le",
}


def promtool(*args, stdin=None):
    return subprocess.run(["promtool"] + list(args), input=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=120)


def grafana_to_promql(expr):
    """A dashboard expression with Grafana's variables filled in."""
    return (expr.replace("$__rate_interval", "1m")
            .replace("$job", "baton").replace("$instance", ".*"))


def metric_names(expr):
    """The metric names an expression reads: identifiers that are not
    PromQL's own words, label names, label values or durations."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)   # label values
    text = re.sub(r"\{[^}]*\}", "{}", text)            # label matchers
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)"
                  r"\s*\([^)]*\)", r"\1()", text)      # label lists
    text = re.sub(r"\[[^\]]*\]", "[]", text)           # ranges
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        word = m.group(0)
        if word in PROMQL_WORDS or re.fullmatch(r"e\d*", word):
            continue
        names.add(word)
    return names


def rule_expressions():
    import yaml
    with open(RULES) as f:
        doc = yaml.safe_load(f)
    return [(r["alert"], r["expr"]) for g in doc["groups"] for r in g["rules"]]


def dashboard_expressions():
    with open(DASHBOARD) as f:
        dash = json.load(f)
    out = []
    for p in dash["panels"]:
        for t in p.get("targets", []):
            out.append(("panel %r" % p["title"], t["expr"]))
    for v in dash["templating"]["list"]:
        q = v.get("query")
        if isinstance(q, dict) and q.get("query", "").startswith(
                "label_values("):
            inner = q["query"][len("label_values("):]
            out.append(("variable %r" % v["name"], inner.split(",")[0]))
    return out


def check_promql(tap, tmp, exprs):
    """Each expression compiles: promtool reads them as recording rules."""
    path = os.path.join(tmp, "exprs.yml")
    with open(path, "w") as f:
        f.write("groups:\n  - name: dashboard\n    rules:\n")
        for i, (_, e) in enumerate(exprs):
            f.write("      - record: dashboard_expr_%d\n" % i)
            f.write("        expr: %s\n" % json.dumps(grafana_to_promql(e)))
    r = promtool("check", "rules", path)
    tap.check("the dashboard's %d expressions are valid PromQL" % len(exprs),
              r.returncode == 0, r.stdout)


def rules_checks(tap, tmp):
    r = promtool("check", "rules", RULES)
    tap.check("promtool check rules deploy/prometheus/baton-alerts.yml",
              r.returncode == 0, r.stdout)
    r = promtool("test", "rules", RULE_TESTS)
    tap.check("promtool test rules deploy/prometheus/baton-alerts.test.yml",
              r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout)
    # Negative control: BatonNoLeader made unable to fire.
    broken = os.path.join(tmp, "broken")
    os.makedirs(broken)
    with open(RULES) as f:
        text = f.read()
    good = "max by (job) (baton_is_leader) < 1"
    mutated = text.replace(good, "max by (job) (baton_is_leader) < 0")
    with open(os.path.join(broken, "baton-alerts.yml"), "w") as f:
        f.write(mutated)
    shutil.copy(RULE_TESTS, broken)
    r = promtool("test", "rules",
                 os.path.join(broken, "baton-alerts.test.yml"))
    tap.check("negative control: a BatonNoLeader that cannot fire fails "
              "promtool test rules",
              good in text and r.returncode != 0
              and "BatonNoLeader" in r.stdout, r.stdout)


def config_check(tap, tmp, cluster):
    """deploy/prometheus/prometheus.yml passes `promtool check config` with
    its certificate paths pointed at the test cluster's (reader's)."""
    d = os.path.join(tmp, "config")
    os.makedirs(d)
    with open(os.path.join(ROOT, "deploy", "prometheus",
                           "prometheus.yml")) as f:
        text = f.read()
    text = (text.replace("/etc/baton/tls/prometheus.", cluster.tls + "/reader.")
            .replace("/etc/baton/tls/", cluster.tls + "/"))
    with open(os.path.join(d, "prometheus.yml"), "w") as f:
        f.write(text)
    shutil.copy(RULES, d)
    r = promtool("check", "config", os.path.join(d, "prometheus.yml"))
    tap.check("promtool check config deploy/prometheus/prometheus.yml",
              r.returncode == 0, r.stdout)


def scrape(cluster, node):
    """GET /metrics of a node's metrics port, over TLS with a certificate
    of the read role, as Prometheus scrapes it (metrics-tls)."""
    url = "https://127.0.0.1:%d/metrics" % (cluster.base + 200 + node)
    with urllib.request.urlopen(url, context=cluster.context("reader"),
                                timeout=10) as r:
        return r.read().decode()


def exported_names(text):
    names = set()
    for line in text.splitlines():
        if line and not line.startswith("#"):
            names.add(re.match(r"[A-Za-z_:][A-Za-z0-9_:]*", line).group(0))
    return names


def names_checks(tap, exported, exprs):
    for where, e in exprs:
        wanted = metric_names(e)
        missing = sorted(n for n in wanted
                         if n not in exported and n not in MADE_BY_PROMETHEUS)
        tap.check("%s names only exported metrics (%s)"
                  % (where, ", ".join(sorted(wanted)) or "none"),
                  wanted and not missing,
                  "not exported: %s\nexpr: %s" % (", ".join(missing), e))
    bogus = metric_names("rate(baton_no_such_metric_total[5m])")
    tap.check("negative control: a name no node exports is reported",
              bogus == {"baton_no_such_metric_total"}
              and not bogus <= exported)


def live_checks(tap, tmp, exprs):
    # Its own ports (BATON_MONITORING_TEST_BASE_PORT, default 29000): make
    # check runs tests two at a time.
    cluster = httpcase.Cluster("BATON_MONITORING_TEST_BASE_PORT",
                               node_config=["metrics-tls = true"],
                               default_base=29000)
    try:
        up = cluster.up()
        tap.note(up.stdout[-400:])
        config_check(tap, tmp, cluster)
        texts = [scrape(cluster, n) for n in (1, 2, 3)]
        exported = set()
        for t in texts:
            exported |= exported_names(t)
        tap.note("%d metric names exported by the three nodes" % len(exported))
        names_checks(tap, exported, exprs)
        r = promtool("check", "metrics", stdin=texts[0])
        tap.check("promtool check metrics accepts a node's /metrics",
                  r.returncode == 0, r.stdout)
    finally:
        found = cluster.down()
        tap.check("no sanitizer report in the nodes' logs", not found,
                  "\n".join(found))


def main():
    tap = httpcase.Tap()
    if not tap.check("promtool is installed (scripts/setup installs "
                     "Debian's prometheus package)",
                     shutil.which("promtool") is not None):
        return tap.end()
    tmp = tempfile.mkdtemp(prefix="baton-monitoring-test.")
    try:
        rules_checks(tap, tmp)
        exprs = [("rule %s" % a, e) for a, e in rule_expressions()]
        dash = dashboard_expressions()
        check_promql(tap, tmp, dash)
        live_checks(tap, tmp, exprs + dash)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return tap.end()


if __name__ == "__main__":
    sys.exit(main())
