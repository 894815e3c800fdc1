"""QUIC connections that hold an HTTP/3 server without asking, through
aioquic (its package, no example needed).

usage: aioquic_idle.py CA_PEM HOST PORT MODE WAIT_S
MODE: silent (the handshake, then no request), after-one (one GET of /,
then nothing). Prints one JSON line: the seconds from the last request
(or the handshake) until the server closed the connection (null: still
open after WAIT_S), and the server's reason phrase."""

import asyncio
import json
import sys
import time

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ConnectionTerminated


class Client(QuicConnectionProtocol):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.h3 = H3Connection(self._quic)
        self.closed = asyncio.get_event_loop().create_future()
        self.answered = asyncio.get_event_loop().create_future()

    def quic_event_received(self, event):
        if isinstance(event, ConnectionTerminated) and not self.closed.done():
            self.closed.set_result(event.reason_phrase)
        for e in self.h3.handle_event(event):
            if isinstance(e, DataReceived) and e.stream_ended and not self.answered.done():
                self.answered.set_result(True)


async def main(ca, host, port, mode, wait):
    cfg = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN)
    cfg.load_verify_locations(ca)
    cfg.idle_timeout = 60.0
    async with connect(host, port, configuration=cfg, create_protocol=Client) as c:
        if mode == "after-one":
            sid = c._quic.get_next_available_stream_id()
            c.h3.send_headers(sid, [(b":method", b"GET"), (b":scheme", b"https"),
                                    (b":authority", host.encode()), (b":path", b"/")], end_stream=True)
            c.transmit()
            await asyncio.wait_for(c.answered, 10)
        t0 = time.time()
        try:
            reason = await asyncio.wait_for(asyncio.shield(c.closed), wait)
            out = {"closed_after": time.time() - t0, "reason": reason}
        except asyncio.TimeoutError:
            out = {"closed_after": None, "reason": None}
        print(json.dumps(out), flush=True)


asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5])))
