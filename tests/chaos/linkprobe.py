#!/usr/bin/env python3
"""Measures a link between two network namespaces, to show that a link
nemesis's fault is real (docs/chaos.md, "Link faults").

  linkprobe.py echo PORT                 UDP echo and TCP sink on PORT
  linkprobe.py udp HOST PORT [N] [GAP_MS] N numbered UDP packets to the echo:
                                         round trips, duplicates, reordering
  linkprobe.py tcp HOST PORT [SECONDS]   bulk TCP to the sink: throughput

Run `echo` in one namespace and the probe in the other (ip netns exec).
"""
import socket
import statistics
import struct
import sys
import threading
import time


def echo(port):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("0.0.0.0", port))
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    t.bind(("0.0.0.0", port))
    t.listen(4)

    def sink():
        while True:
            c, _ = t.accept()
            n, first, last = 0, None, None
            while True:
                b = c.recv(65536)
                if not b:
                    break
                last = time.monotonic()
                first = first or last
                n += len(b)
            us = int(((last or 0) - (first or 0)) * 1e6)
            c.sendall(struct.pack("!QQ", n, us))
            c.close()

    threading.Thread(target=sink, daemon=True).start()
    while True:
        b, a = u.recvfrom(2048)
        u.sendto(b, a)


def udp(host, port, n=200, gap_ms=20):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(0.01)
    sent = {}
    rtts, order, seen = [], [], set()
    dups = 0
    end = None
    i = 0
    while True:
        now = time.monotonic()
        if i < n and (not sent or now - sent[i - 1] >= gap_ms / 1000):
            sent[i] = now
            s.sendto(struct.pack("!I", i), (host, port))
            i += 1
            if i == n:
                end = now + 1.5
        if end is not None and now > end:
            break
        try:
            b, _ = s.recvfrom(64)
        except socket.timeout:
            continue
        k = struct.unpack("!I", b[:4])[0]
        if k in seen:
            dups += 1
            continue
        seen.add(k)
        order.append(k)
        rtts.append((time.monotonic() - sent[k]) * 1000)
    late = sum(1 for a, b in zip(order, order[1:]) if b < a)
    if not rtts:
        print(f"udp {host}:{port}: {n} sent, 0 answered")
        return
    q = statistics.quantiles(rtts, n=10) if len(rtts) > 1 else rtts * 9
    print(
        f"udp {host}:{port}: {n} sent, {len(seen)} answered, {dups} duplicates, "
        f"{late} out of order; rtt ms min {min(rtts):.1f} p10 {q[0]:.1f} "
        f"median {statistics.median(rtts):.1f} p90 {q[8]:.1f} max {max(rtts):.1f} "
        f"stdev {statistics.pstdev(rtts):.1f}"
    )


def tcp(host, port, seconds=4.0):
    # A small send buffer: what the sender queues must drain at the
    # link's rate before the sink answers.
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)
    c.settimeout(30)
    c.connect((host, port))
    buf = b"x" * 4096
    t0 = time.monotonic()
    c.settimeout(0.5)
    while time.monotonic() - t0 < seconds:
        try:
            c.send(buf)
        except socket.timeout:
            pass
    c.shutdown(socket.SHUT_WR)
    c.settimeout(120)
    n, us = struct.unpack("!QQ", c.recv(16))
    t = max(us / 1e6, 1e-6)
    print(f"tcp {host}:{port}: the sink received {n} bytes in {t:.1f} s = {n * 8 / t / 1000:.0f} kbit/s")


def main(a):
    if len(a) >= 2 and a[0] == "echo":
        echo(int(a[1]))
    elif len(a) >= 3 and a[0] == "udp":
        udp(a[1], int(a[2]), *(int(x) for x in a[3:5]))
    elif len(a) >= 3 and a[0] == "tcp":
        tcp(a[1], int(a[2]), *(float(x) for x in a[3:4]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
