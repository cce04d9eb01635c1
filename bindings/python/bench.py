#!/usr/bin/env python3
"""baton-bench's uncontended workload, from Python.

    /usr/bin/python3 bench.py [--threads 1] [--duration 10] [--warmup 1]
                              [--endpoints H:P,...] [--api lease|raw]
                              [--shared-client] [--ttl-ms 10000]

Each thread takes and releases its own lock (P-c<i>) back to back; one op
is an acquire followed by its release, both acknowledged, as baton-bench
counts it (docs/performance.md; shared/peers/README.md). Like baton-bench,
each thread has its own Client (its own session and connection) unless
--shared-client. Prints one JSON line: ops_per_s, the op latency p50/p99/
max in us (acquire call to release acknowledged, nearest rank), and
cpu_us_per_op, the CPU time the calling threads spent per op (the binding
and libbaton's calling side; the I/O runs on libbaton's own thread).

--api lease uses the binding (client.lock() -> Lease -> release()); --api
raw calls baton_acquire()/baton_release() through ctypes directly, so the
difference between the two is what the binding adds on top of ctypes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import threading
import time
from ctypes import byref, c_uint64
from typing import List, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import baton  # noqa: E402  (the tree's package, next to this file)
from baton import owners  # noqa: E402


def percentile(sorted_us: List[int], q: float) -> int:
    if not sorted_us:
        return 0
    return sorted_us[max(0, math.ceil(q * len(sorted_us)) - 1)]


def worker(
    client: baton.Client,
    api: str,
    name: str,
    start_measure: float,
    end: float,
    out: List[Tuple[List[int], int, float, int]],
    ready: threading.Barrier,
) -> None:
    lat: List[int] = []
    errors = 0
    ops_total = 0
    encoded = name.encode()
    owner = owners.thread_owner()
    lib = client._lib
    token = c_uint64()
    ready.wait()
    cpu_start = cpu_measured = None
    while True:
        now = time.perf_counter()
        if now >= end:
            break
        if cpu_start is None and now >= start_measure:
            cpu_start = time.thread_time()
        t0 = time.perf_counter_ns()
        try:
            if api == "lease":
                lease = client.acquire(name, wait=5.0)
                lease.release()
            else:
                ptr = client._enter()
                try:
                    rv = lib.baton_acquire(ptr, encoded, owner, 5000, byref(token))
                    if rv == 0:
                        rv = lib.baton_release(ptr, encoded, owner, token.value)
                finally:
                    client._exit()
                if rv != 0:
                    raise baton.error_for(rv)
        except baton.Error:
            if time.perf_counter() >= start_measure:
                errors += 1
            time.sleep(0.01)
            continue
        done = time.perf_counter()
        if start_measure <= done <= end:
            lat.append((time.perf_counter_ns() - t0) // 1000)
            ops_total += 1
    cpu_measured = time.thread_time() - (cpu_start if cpu_start is not None else 0.0)
    out.append((lat, errors, cpu_measured, ops_total))


def main() -> int:
    ap = argparse.ArgumentParser(
        description="uncontended lock/unlock pairs from Python"
    )
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--endpoints", default=None)
    ap.add_argument("--ttl-ms", type=int, default=10000)
    ap.add_argument("--prefix", default=f"pybench-{os.getpid()}")
    ap.add_argument("--api", choices=("lease", "raw"), default="lease")
    ap.add_argument("--shared-client", action="store_true")
    args = ap.parse_args()

    n = args.threads
    shared = (
        baton.Client(args.endpoints, ttl=args.ttl_ms / 1000)
        if args.shared_client
        else None
    )
    clients = [
        shared or baton.Client(args.endpoints, ttl=args.ttl_ms / 1000) for _ in range(n)
    ]
    out: List[Tuple[List[int], int, float, int]] = []
    ready = threading.Barrier(n + 1)
    start = time.perf_counter() + 0.05
    start_measure = start + args.warmup
    end = start_measure + args.duration
    threads = [
        threading.Thread(
            target=worker,
            args=(
                clients[i],
                args.api,
                f"{args.prefix}-c{i}",
                start_measure,
                end,
                out,
                ready,
            ),
        )
        for i in range(n)
    ]
    for t in threads:
        t.start()
    ready.wait()
    for t in threads:
        t.join()
    for c in set(clients):
        c.close()

    lat = sorted(x for thread_lat, _, _, _ in out for x in thread_lat)
    ops = len(lat)
    cpu = sum(c for _, _, c, _ in out)
    print(
        json.dumps(
            {
                "system": "baton",
                "nodes": 3,
                "workload": "uncontended",
                "clients": n,
                "ops": ops,
                "seconds": round(args.duration, 3),
                "ops_per_s": round(ops / args.duration, 1),
                "p50_us": percentile(lat, 0.50),
                "p99_us": percentile(lat, 0.99),
                "max_us": lat[-1] if lat else 0,
                "errors": sum(e for _, e, _, _ in out),
                "cpu_us_per_op": round(cpu / ops * 1e6, 1) if ops else 0,
                "variant": f"python-{args.api}" + ("-shared-client" if shared else ""),
                "driver": f"baton-python-ctypes (CPython {sys.version.split()[0]})",
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
