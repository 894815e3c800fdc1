"""Servers that misbehave, for crates/cli/tests/hostile.rs.

Usage: hostile_server.py MODE PORT [LOG]; LOG gets one line per request
line received (close-on-reuse), so a test can count what was sent twice.
"""
import socket, sys, threading, time
mode, port = sys.argv[1], int(sys.argv[2])
log = open(sys.argv[3], "a", buffering=1) if len(sys.argv) > 3 else None
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); ls.bind(("127.0.0.1", port)); ls.listen(64)
print("listening", flush=True)
def handle(c):
    try:
        if mode == "silent":
            time.sleep(30)
        elif mode == "stacked-gzip":
            # Content-Encoding: gzip three (/3) or six (/6) times over.
            import gzip
            layers = 6 if b" /6 " in c.recv(65536) else 3
            body = b"stacked body\n" * 100
            for _ in range(3):
                body = gzip.compress(body)
            enc = ", ".join(["gzip"] * layers).encode()
            c.send(b"HTTP/1.1 200 OK\r\nContent-Encoding: " + enc + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
        elif mode == "trickle":
            c.recv(65536)
            for b in b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x"*100:
                c.send(bytes([b])); time.sleep(1)
        elif mode == "endless-header":
            c.recv(65536); c.send(b"HTTP/1.1 200 OK\r\n")
            while True: c.send(b"X-A: " + b"a"*1000 + b"\r\n")
        elif mode == "endless-1xx":
            # 100 Continue heads for ever, never a final response
            c.recv(65536)
            while True: c.send(b"HTTP/1.1 100 Continue\r\nX-A: " + b"a"*100 + b"\r\n\r\n")
        elif mode == "endless-chunked":
            c.recv(65536); c.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            while True: c.send(b"10000\r\n" + b"z"*65536 + b"\r\n")
        elif mode in ("h2-ping-flood", "h2-settings-flood"):
            # h2c with prior knowledge: the server's SETTINGS, then PINGs
            # (or SETTINGS) for ever, never a response; the client's answers are drained.
            import struct
            def frame(kind, flags, stream, payload=b""):
                return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload
            c.recv(65536)
            threading.Thread(target=lambda: [None for _ in iter(lambda: c.recv(65536), b"")], daemon=True).start()
            one = {"h2-ping-flood": frame(6, 0, 0, b"\0" * 8),
                   "h2-settings-flood": frame(4, 0, 0, b"\0\3\0\0\0\x64")}[mode]
            c.sendall(frame(4, 0, 0))
            while True: c.sendall(one * 100)
        elif mode == "close-on-reuse":
            # answers the first request, then closes just as the client reuses it
            data = c.recv(65536)
            if log: log.write(data.split(b"\r\n")[0].decode() + "\n")
            c.send(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            data = c.recv(65536)  # the reuse: closed without an answer
            if log and data: log.write(data.split(b"\r\n")[0].decode() + " (dropped)\n")
            c.close(); return
    except OSError:
        pass
    c.close()
while True:
    c, _ = ls.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
