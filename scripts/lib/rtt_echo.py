#!/usr/bin/env python3
"""Idle round trips of 100-byte TCP messages (TCP_NODELAY), as `emu
selftest` times them, for comparing testbeds from outside: `server PORT`
echoes; `client HOST PORT N` prints one JSON line with every round trip's
milliseconds and their median and p99 (nearest rank)."""
import json, socket, sys, time


def server(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(16)
    while True:
        c, _ = s.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while True:
            b = c.recv(4096)
            if not b:
                break
            c.sendall(b)
        c.close()


def client(host, port, n):
    c = socket.create_connection((host, port))
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    msg = b"x" * 100
    rtts = []
    for _ in range(n):
        t = time.monotonic_ns()
        c.sendall(msg)
        got = 0
        while got < len(msg):
            got += len(c.recv(4096))
        rtts.append((time.monotonic_ns() - t) / 1e6)
        time.sleep(0.005)
    c.close()
    s = sorted(rtts)
    rank = lambda q: s[max(0, -(-int(q * len(s) * 1000) // 1000) - 1)]
    print(json.dumps({"samples": n, "median_ms": rank(0.5), "p99_ms": rank(0.99), "rtts_ms": rtts}))


if __name__ == "__main__":
    if sys.argv[1] == "server":
        server(int(sys.argv[2]))
    else:
        client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
