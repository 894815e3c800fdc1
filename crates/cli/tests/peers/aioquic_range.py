"""GETs over HTTP/3 with a Range header, through the aioquic example
client's HttpClient (examples/http3_client.py, on sys.path from argv[1]):
the example's command line has no way to send a header.

usage: aioquic_range.py EXAMPLES_DIR CA_PEM URL RANGE OUT
Writes the body to OUT and prints the status and content-range."""

import asyncio
import sys
from urllib.parse import urlparse

sys.path.insert(0, sys.argv[1])

from aioquic.asyncio.client import connect  # noqa: E402
from aioquic.h3.connection import H3_ALPN  # noqa: E402
from aioquic.h3.events import DataReceived, HeadersReceived  # noqa: E402
from aioquic.quic.configuration import QuicConfiguration  # noqa: E402
from http3_client import HttpClient  # noqa: E402


async def main(ca, url, rng, out):
    u = urlparse(url)
    cfg = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN)
    cfg.load_verify_locations(ca)
    async with connect(u.hostname, u.port, configuration=cfg, create_protocol=HttpClient) as c:
        events = await c.get(url, headers={"range": rng})
    status, crange, body = None, None, b""
    for e in events:
        if isinstance(e, HeadersReceived):
            for k, v in e.headers:
                if k == b":status":
                    status = v.decode()
                elif k == b"content-range":
                    crange = v.decode()
        elif isinstance(e, DataReceived):
            body += e.data
    with open(out, "wb") as f:
        f.write(body)
    print(status, crange)


asyncio.run(main(*sys.argv[2:6]))
