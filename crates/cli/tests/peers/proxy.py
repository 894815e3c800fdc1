"""A small HTTP proxy for the tests: absolute-form requests are forwarded
(with Connection: close), CONNECT opens a tunnel, and every request line is
appended to the log file given as argv[1]. CONNECT to port 1 is refused
with 403, and a request without `Proxy-Authorization: Basic dTpw` (u:p) to
a host named auth.test gets 407. Prints its port, serves until killed."""
import select
import socket
import socketserver
import sys

LOG = sys.argv[1]


def relay(a, b):
    socks = [a, b]
    while True:
        r, _, _ = select.select(socks, [], [], 10)
        if not r:
            return
        for s in r:
            data = s.recv(65536)
            if not data:
                return
            (b if s is a else a).sendall(data)


class H(socketserver.BaseRequestHandler):
    def handle(self):
        c = self.request
        head = b""
        while b"\r\n\r\n" not in head:
            d = c.recv(4096)
            if not d:
                return
            head += d
        head, rest = head.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ", 2)
        headers = [l for l in lines[1:] if l]
        with open(LOG, "a") as f:
            f.write(lines[0] + "\n")
        auth = [h for h in headers if h.lower().startswith("proxy-authorization:")]
        if "auth.test" in target and auth != ["Proxy-Authorization: Basic dTpw"]:
            c.sendall(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
            return
        if method == "CONNECT":
            host, port = target.rsplit(":", 1)
            if port == "1":
                c.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                return
            up = socket.create_connection((host.strip("[]"), int(port)))
            c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            relay(c, up)
            return
        assert target.startswith("http://")
        hostport, _, path = target[len("http://"):].partition("/")
        host, _, port = hostport.partition(":")
        if host == "auth.test":
            host = "127.0.0.1"
        up = socket.create_connection((host, int(port or 80)))
        kept = [h for h in headers if not h.lower().startswith(("proxy-", "connection:"))]
        req = f"{method} /{path} {version}\r\n" + "\r\n".join(kept) + "\r\nConnection: close\r\n\r\n"
        up.sendall(req.encode("latin-1") + rest)
        relay(c, up)


class S(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


s = S(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
