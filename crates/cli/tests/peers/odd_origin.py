"""An origin that answers what the curl differential tests need: the
request echoed back (method, target, chosen headers, body) and servers
that misbehave in the ways real ones do. Prints its port, then serves
until killed. With `--tls CERT KEY` it speaks HTTPS."""
import gzip
import http.server
import socketserver
import sys
import urllib.parse

SHOWN = ("authorization", "content-type", "content-length", "range", "referer",
         "accept-encoding", "host", "if-range", "cookie", "accept",
         "transfer-encoding", "if-modified-since", "if-unmodified-since", "if-none-match",
         "connection")


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def raw(self, data):
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True

    def send(self, status, body, ctype="text/plain", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def echo(self):
        lines = [f"{self.command} {self.path} {self.request_version}"]
        for k in sorted(set(k.lower() for k in self.headers.keys())):
            v = self.headers.get(k)
            if k in SHOWN or k.startswith("x-") or (
                k == "user-agent" and not v.startswith(("curl/", "tcpwise/"))
            ):
                lines.append(f"{k}: {v}")
        self.send(200, ("\n".join(lines) + "\n\n").encode() + self.body())

    def route(self):
        p = self.path.split("?")[0]
        if p == "/echo-req" or p.startswith("/echo-req/") or p.startswith("/x/"):
            return self.echo()
        self.body()
        if p == "/empty-reply":
            self.close_connection = True
            return
        if p == "/http10":
            return self.raw(b"HTTP/1.0 200 Fine Thanks\r\nX-MiXed-CaSe: Yes\r\nContent-Type: text/plain\r\n"
                            b"content-length: 6\r\n\r\nhello\n")
        if p.startswith("/disposition"):
            q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            return self.send(200, b"named\n", extra=[("Content-Disposition", q.get("v", ["attachment"])[0])])
        if p.startswith("/set-cookie"):
            q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            extra = [("Set-Cookie", v) for v in q.get("c", [])]
            if "to" in q:
                return self.send(302, b"", extra=extra + [("Location", q["to"][0])])
            return self.send(200, b"set\n", extra=extra)
        if p == "/redirect":
            to = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("to", ["/"])[0]
            return self.send(302, b"", extra=[("Location", to)])
        if p == "/loop":
            return self.send(302, b"", extra=[("Location", "/loop")])
        if p.startswith("/chain/"):
            n = int(p.rsplit("/", 1)[1])
            if n == 0:
                return self.send(200, b"end of chain\n")
            return self.send(302, b"moved\n", extra=[("Location", f"/chain/{n - 1}")])
        if p == "/moved":
            return self.send(301, b"", extra=[("Location", "/echo-req")])
        if p == "/see-other":
            return self.send(303, b"", extra=[("Location", "/echo-req")])
        if p == "/temporary":
            return self.send(307, b"", extra=[("Location", "/echo-req")])
        if p == "/found":
            return self.send(302, b"", extra=[("Location", "/echo-req")])
        if p == "/truncated":
            return self.raw(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b")
        if p == "/truncated-chunked":
            return self.raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n10\r\nshort")
        if p == "/chunked":
            return self.raw(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                            b"5\r\nhello\r\n7\r\n world\n\r\n0\r\n\r\n")
        if p == "/close-delimited":
            return self.raw(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end\n")
        if p == "/garbage":
            return self.raw(b"this is not http\r\n\r\n")
        if p == "/busy":
            return self.send(503, b"busy\n")
        if p == "/teapot":
            return self.send(418, b"short and stout\n")
        if p == "/auth":
            if self.headers.get("Authorization") == "Basic dXNlcjpwYXNz":
                return self.send(200, b"welcome\n")
            return self.send(401, b"who are you\n", extra=[("WWW-Authenticate", 'Basic realm="x"')])
        if p == "/gzip":
            return self.send(200, gzip.compress(b"compressed text " * 64), extra=[("Content-Encoding", "gzip")])
        if p == "/gzip-bad":
            return self.send(200, b"this is not gzip at all", extra=[("Content-Encoding", "gzip")])
        if p == "/no-content":
            self.send_response(204)
            self.end_headers()
            return
        if p == "/empty":
            return self.send(200, b"")
        if p == "/last-modified":
            # Ignores -z's request header: the client checks the date too.
            return self.send(200, b"dated 1994\n", extra=[("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")])
        return self.send(404, b"no such thing\n")

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = do_PATCH = do_OPTIONS = do_PROPFIND = route


class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


s = S(("127.0.0.1", 0), H)
if len(sys.argv) == 4 and sys.argv[1] == "--tls":
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[2], sys.argv[3])
    s.socket = ctx.wrap_socket(s.socket, server_side=True)
print(s.server_address[1], flush=True)
s.serve_forever()
