"""The InfluxDB v1 HTTP API (`/ping`, `/write`, `/query`), which 1.x, 2.x and 3.x all
speak: stdlib `http.client`, one keep-alive connection, no proxies. Error messages never
hold the URL's query (it may hold `p=`) and are scrubbed of the secret: they end up in
spool files, logs and CLI output.
"""

from __future__ import annotations

import base64
import http.client
import json
from typing import Any
from urllib.parse import urlencode, urlsplit

from rig.config.influx import InfluxSettings
from rig.errors import ConfigError, SinkError
from rig.sinks.influx import influxql

# Kinds of failure. The first three are the server being away: retry later. REJECTED is
# the data's fault (400: field type conflict, bad line): only that request's reports are
# refused. The rest (auth, credentials, 404 ...) concern every request alike.
UNREACHABLE = "unreachable"
TIMEOUT = "timeout"
SERVER = "server_error"
REJECTED = "rejected"
AUTH = "auth"
CREDENTIALS = "credentials"
HTTP = "http_error"


class InfluxError(SinkError):
    def __init__(self, message: str, kind: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status

    @property
    def data_rejected(self) -> bool:
        """The server refused this request's data; other reports may still go through."""
        return self.kind == REJECTED


def _server_message(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        obj = json.loads(text)
        if isinstance(obj, dict) and obj.get("error"):
            text = str(obj["error"])
        elif isinstance(obj, dict) and obj.get("message"):  # 2.x and 3.x error bodies
            text = str(obj["message"])
    except ValueError:
        pass
    return text[:500]


class Client:
    def __init__(self, settings: InfluxSettings) -> None:
        self.settings = settings
        parts = urlsplit(settings.url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._conn: http.client.HTTPConnection | None = None
        self._used = False
        try:
            self.__secret = settings.password()
        except ConfigError as e:
            raise InfluxError(str(e), CREDENTIALS) from None
        self._headers: dict[str, str] = {}
        self._auth_params: dict[str, str] = {}
        if self.__secret is not None:
            user = settings.username or "bootrig"
            if settings.auth_scheme == "token":
                self._headers["Authorization"] = f"Token {self.__secret}"
            elif settings.auth_scheme == "query":
                self._auth_params = {"u": user, "p": self.__secret}
            else:
                cred = base64.b64encode(f"{user}:{self.__secret}".encode()).decode()
                self._headers["Authorization"] = f"Basic {cred}"

    def __repr__(self) -> str:
        return f"Client({self.settings.url!r}, database={self.settings.database!r})"

    def scrub(self, text: str) -> str:
        return text.replace(self.__secret, "***") if self.__secret else text

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._conn, self._used = None, False

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connect(self) -> http.client.HTTPConnection:
        if self._conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._conn = cls(self._host, self._port, timeout=self.settings.timeout_s)
            self._used = False
        return self._conn

    def request(
        self,
        method: str,
        endpoint: str,
        params: dict[str, str],
        body: bytes | None = None,
        content_type: str = "text/plain; charset=utf-8",
    ) -> tuple[int, dict[str, str], bytes]:
        query = urlencode({**params, **self._auth_params})
        path = f"{self._prefix}{endpoint}" + (f"?{query}" if query else "")
        headers = dict(self._headers)
        if body is not None:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):
            conn = self._connect()
            reused = self._used
            try:
                conn.request(method, path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                self._used = True
                return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
            except TimeoutError:
                self.close()
                raise InfluxError(
                    f"{self.settings.url}: no answer within {self.settings.timeout_s:g} s", TIMEOUT
                ) from None
            except (OSError, http.client.HTTPException) as e:
                self.close()
                # A keep-alive connection the server closed while idle: once more, fresh.
                if reused and attempt == 1:
                    continue
                reason = self.scrub(type(e).__name__ + (f": {e}" if str(e) else ""))
                raise InfluxError(f"{self.settings.url}: {reason}", UNREACHABLE) from None
        raise AssertionError("not reached")

    def _fail(self, what: str, status: int, body: bytes) -> InfluxError:
        msg = self.scrub(f"{what}: HTTP {status}: {_server_message(body)}")
        if status in (401, 403):
            return InfluxError(msg, AUTH, status)
        if status >= 500:
            return InfluxError(msg, SERVER, status)
        if status in (400, 413, 422):
            return InfluxError(msg, REJECTED, status)
        return InfluxError(msg, HTTP, status)

    def ping(self) -> str:
        """The server's version (1.x and 2.x send it in a header)."""
        status, headers, body = self.request("GET", "/ping", {})
        if status not in (200, 204):
            raise self._fail("ping", status, body)
        return headers.get("x-influxdb-version", "unknown")

    def write(self, lines: list[str] | bytes, precision: str | None = None) -> None:
        """Write line protocol; returns only when the server acknowledged it (2xx)."""
        s = self.settings
        body = lines if isinstance(lines, bytes) else "\n".join(lines).encode()
        params = {"db": s.database, "precision": precision or s.precision}
        if s.retention_policy:
            params["rp"] = s.retention_policy
        status, _, data = self.request("POST", "/write", params, body)
        if status == 404 and s.create_database and b"database not found" in data:
            try:
                self.create_database()
            except InfluxError:
                pass  # e.g. 2.x has no CREATE DATABASE: the 404 below says what is wrong
            else:
                status, _, data = self.request("POST", "/write", params, body)
        if not 200 <= status < 300:
            raise self._fail("write", status, data)

    def query(self, q: str, database: str | None = None) -> list[dict[str, Any]]:
        """InfluxQL sent as a form (keeps statements out of URLs and access logs)."""
        form = {"q": q, "epoch": "ns"}
        if database:
            form["db"] = database
            if self.settings.retention_policy:
                form["rp"] = self.settings.retention_policy
        body = urlencode(form).encode()
        status, _, data = self.request(
            "POST", "/query", {}, body, "application/x-www-form-urlencoded"
        )
        if status != 200:
            raise self._fail("query", status, data)
        try:
            results = json.loads(data).get("results", [])
        except (ValueError, AttributeError):
            raise InfluxError("query: the answer is not InfluxDB JSON", HTTP, status) from None
        for r in results:
            if r.get("error"):
                raise InfluxError(self.scrub(f"query: {r['error']}"), REJECTED, status)
        return list(results)

    def create_database(self) -> None:
        self.query(f"CREATE DATABASE {influxql.ident(self.settings.database)}")
