"""A network PDU with a REST interface, on 127.0.0.1 (the board's relay contacts again).

It answers the two URL conventions labgrid's `NetworkPowerPort` speaks over HTTP, so a
real labgrid exporter and client drive it with their own code:

- `simplerest`: `GET /relay/{outlet}/{0|1}` switches, `GET /relay/{outlet}` reads;
- `rest`: `PUT /relay/{outlet}/value` with body `0` or `1` switches, `GET` on the same
  URL reads.

Outlets are numbered from 1, as the relay channels (and PDU sockets) are. A switch is
stamped with the host time its request line arrived, like the relay frames.
"""

from __future__ import annotations

import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from simboard.relay import FrameHandler

_PATH = re.compile(r"^/relay/(\d{1,3})(?:/(0|1|value))?/?$")
#: A request body longer than this is not a relay state.
MAX_BODY = 64


class PduServer:
    """`url`: the base every outlet's URL starts with (`http://127.0.0.1:PORT`)."""

    def __init__(self, outlets: int, on_frame: FrameHandler, port: int = 0) -> None:
        self.outlets = outlets
        self.state = dict.fromkeys(range(1, outlets + 1), False)
        self.requests = 0
        self.errors = 0
        self._on_frame = on_frame
        self._lock = threading.Lock()
        pdu = self

        class Handler(BaseHTTPRequestHandler):
            # HTTP/1.0: one request per connection, as the small PDUs serve it.
            def log_message(self, format: str, *args: object) -> None:
                pass  # the simulator's stderr is for faults, not for every switch

            def do_GET(self) -> None:
                pdu._request(self, "GET", time.monotonic_ns())

            def do_PUT(self) -> None:
                pdu._request(self, "PUT", time.monotonic_ns())

        self._http = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._http.daemon_threads = True
        self.port = self._http.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._http.serve_forever, name="pdu", daemon=True)
        self._thread.start()

    def _request(self, h: BaseHTTPRequestHandler, method: str, t_ns: int) -> None:
        m = _PATH.match(h.path)
        outlet = int(m.group(1)) if m else 0
        if m is None or outlet not in self.state:
            self._answer(h, 404, f"no outlet at {h.path} (outlets 1..{self.outlets})")
            return
        word = m.group(2)
        if method == "PUT":
            if word != "value":
                self._answer(h, 405, "PUT goes to /relay/N/value")
                return
            length = int(h.headers.get("Content-Length") or 0)
            body = h.rfile.read(min(length, MAX_BODY)).strip() if length <= MAX_BODY else b""
            if body not in (b"0", b"1"):
                self._answer(h, 400, f"expected body 0 or 1, found {body[:16]!r}")
                return
            word = body.decode()
        if word in ("0", "1"):
            with self._lock:
                self.state[outlet] = word == "1"
                self.requests += 1
            self._on_frame(outlet, int(word), t_ns)
            self._answer(h, 200, word)
            return
        with self._lock:
            on = self.state[outlet]
        self._answer(h, 200, "1" if on else "0")

    def _answer(self, h: BaseHTTPRequestHandler, code: int, text: str) -> None:
        if code != 200:
            with self._lock:
                self.errors += 1
        body = text.encode()
        h.send_response(code)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()
