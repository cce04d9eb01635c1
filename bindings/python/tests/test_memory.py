"""Memory does not grow over 100,000 lock/unlock cycles: neither the
Python heap (tracemalloc) nor the process (RSS, which libbaton's own
allocations count in).

The cycles run on 16 threads sharing one Client (each thread its own lock),
which exercises the same per-cycle code as one thread at about four times
the rate: one cycle takes about 0.9 ms on one thread on the 2-core test
machine (90 s for 100,000), about 0.25 ms spread over 16 (about 25 s).
BATON_PY_MEMORY_CYCLES sets another count.
"""

from __future__ import annotations

import gc
import os
import threading
import time
import tracemalloc

import baton

CYCLES = int(os.environ.get("BATON_PY_MEMORY_CYCLES", "100000"))
THREADS = 16
WARMUP = 3200  # allocator pools, thread stacks and caches settle first

# Bounds: a leak of one small object per cycle (>= 16 bytes) shows as
# over 1.5 MB here; what remains is the noise of a settled heap.
HEAP_MAX = 256 * 1024
RSS_MAX = 4 * 1024 * 1024


def rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def run(client: baton.Client, prefix: str, cycles: int) -> None:
    per = cycles // THREADS
    errors = []

    def worker(i: int) -> None:
        name = f"{prefix}-{i}"
        try:
            for _ in range(per):
                with client.lock(name, wait=5):
                    pass
        except Exception as e:  # pragma: no cover - asserted below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_no_growth_over_many_cycles(cluster, unique):
    prefix = unique()
    with baton.Client() as client:
        start = time.monotonic()
        with client.lock(prefix):
            pass
        one = time.monotonic() - start
        run(client, prefix, WARMUP)
        gc.collect()
        rss_before = rss()
        tracemalloc.start()
        try:
            heap_before = tracemalloc.get_traced_memory()[0]
            start = time.monotonic()
            run(client, prefix, CYCLES)
            took = time.monotonic() - start
            gc.collect()
            heap_after = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        rss_after = rss()
        assert not client._tracker.leases  # every lease was let go
        assert client.list_locks(prefix) == []
    print(
        f"first cycle {one * 1000:.2f} ms; {CYCLES} cycles in {took:.1f} s "
        f"({CYCLES / took:.0f}/s on {THREADS} threads); heap "
        f"{heap_after - heap_before:+d} B; RSS {rss_after - rss_before:+d} B"
    )
    assert CYCLES >= 100000 or "BATON_PY_MEMORY_CYCLES" in os.environ
    assert heap_after - heap_before < HEAP_MAX
    assert rss_after - rss_before < RSS_MAX
