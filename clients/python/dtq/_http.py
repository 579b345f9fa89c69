"""The HTTP transport: JSON requests over a pool of keep-alive connections.

A worker draining thousands of tasks a second cannot afford a TCP handshake
per call, and urllib opens one per request; this keeps idle
``http.client.HTTPConnection`` objects in a pool and reuses them. A
connection the server closed while idle fails on its next use: that request
is sent once more on a fresh connection (the failure happened before the
server read it, as urllib3 also assumes).
"""

from __future__ import annotations

import http.client
import json
import os
import select
import socket
import ssl
import threading
import urllib.parse
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .errors import ConnectionFailed, DtqError, error_from_answer

DEFAULT_URL = "http://localhost:8000"

# Failures of a reused connection that mean "the server closed it while it
# was idle": the request is sent again once on a fresh connection.
_STALE = (http.client.RemoteDisconnected, http.client.BadStatusLine, BrokenPipeError,
          ConnectionResetError, ConnectionAbortedError)


def resolve_url(url: Optional[str]) -> str:
    """url, else $DTQ_API_URL, else http://localhost:8000 (the dtq CLI's rule)."""
    u = url or os.environ.get("DTQ_API_URL") or DEFAULT_URL
    if not isinstance(u, str):
        raise TypeError("url: must be a string, got %r" % (u,))
    parts = urllib.parse.urlsplit(u)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("url: must be http://host[:port] or https://host[:port], got %r" % u)
    return u.rstrip("/")


def resolve_api_key(api_key: Optional[str]) -> Optional[str]:
    """api_key, else $DTQ_API_KEY, else None (no X-API-Key header)."""
    return api_key if api_key is not None else (os.environ.get("DTQ_API_KEY") or None)


class Transport:
    """Sends JSON requests to one dtq server. Thread-safe: each request takes
    a connection of its own from the pool and gives it back after reading
    the whole answer."""

    def __init__(self, url: Optional[str] = None, api_key: Optional[str] = None, timeout: float = 30.0,
                 user_agent: str = "dtq-python") -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError("timeout: must be a number of seconds above 0, got %r" % (timeout,))
        self.url = resolve_url(url)
        self.api_key = resolve_api_key(api_key)
        self.timeout = float(timeout)
        parts = urllib.parse.urlsplit(self.url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or "localhost"
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/")
        self._headers = {"User-Agent": user_agent, "Accept": "application/json"}
        if self.api_key:
            self._headers["X-API-Key"] = self.api_key
        self._idle: List[http.client.HTTPConnection] = []
        self._lock = threading.Lock()
        self._closed = False

    # The pool.

    def _new_conn(self, timeout: float) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(self._host, self._port, timeout=timeout,
                                               context=ssl.create_default_context())
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout)

    def _take(self, timeout: float) -> Tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            return self._new_conn(timeout), False
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        return conn, True

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < 64:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Closes the idle connections; requests still open their own."""
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    # Requests.

    def request(self, method: str, path: str, body: Any = None, *, query: Optional[Mapping[str, Any]] = None,
                headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None,
                raw_body: Optional[bytes] = None, abort: Optional["Abort"] = None) -> Tuple[int, Any]:
        """Sends the request and returns (status, answer) for any status: the
        decoded JSON answer (None for an empty one), or for a status >= 400
        the DtqError it maps to. Raises ConnectionFailed when no answer came.

        ``raw_body`` is a body already encoded as JSON. ``abort``, when given,
        lets another thread (or a signal handler) abort the request: see
        Abort."""
        target = self._prefix + path
        if query:
            q = {k: _query_value(v) for k, v in query.items() if v is not None}
            if q:
                target += "?" + urllib.parse.urlencode(q)
        data = None
        hdrs = dict(self._headers)
        if raw_body is not None:
            data = raw_body
        elif body is not None:
            data = json.dumps(body, separators=(",", ":"), allow_nan=False).encode()
        if data is not None:
            hdrs["Content-Type"] = "application/json"
        if headers:
            hdrs.update(headers)
        t = self.timeout if timeout is None else timeout
        for attempt in (0, 1):
            conn, reused = self._take(t)
            try:
                if abort is not None:
                    abort.enter(conn)
                conn.request(method, target, body=data, headers=hdrs)
                res = conn.getresponse()
                raw = res.read()
            except _STALE as e:
                conn.close()
                if reused and attempt == 0 and not (abort is not None and abort.aborted):
                    continue
                raise ConnectionFailed("%s %s: %s" % (method, path, _describe(e)), code="connection_failed") from e
            except (OSError, http.client.HTTPException) as e:
                conn.close()
                raise ConnectionFailed("%s %s: %s" % (method, path, _describe(e)), code="connection_failed") from e
            finally:
                if abort is not None:
                    abort.conn = None
            if res.will_close:
                conn.close()
            else:
                self._give_back(conn)
            answer: Any = None
            if raw:
                try:
                    answer = json.loads(raw)
                except ValueError:
                    answer = {"error": {"code": "", "message": raw.decode("utf-8", "replace")[:500]}}
            if res.status >= 400:
                answer = error_from_answer(res.status, answer, _float_or_none(res.getheader("Retry-After")))
            return res.status, answer
        raise AssertionError("unreachable")  # pragma: no cover

    def call(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        """request(), raising the DtqError of any status >= 400 and returning
        the decoded answer otherwise."""
        status, answer = self.request(method, path, body, **kw)
        if isinstance(answer, DtqError):
            raise answer
        return answer


def quote(segment: str, what: str) -> str:
    """A path segment, escaped; refuses a non-string or empty one naming what."""
    if not isinstance(segment, str) or segment == "":
        raise ValueError("%s: must be a non-empty string, got %r" % (what, segment))
    return urllib.parse.quote(segment, safe="")


def _query_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def _float_or_none(s: Optional[str]) -> Optional[float]:
    try:
        return float(s) if s else None
    except ValueError:
        return None


def _describe(e: BaseException) -> str:
    if isinstance(e, socket.timeout):
        return "timed out"
    return str(e) or type(e).__name__


class Abort:
    """Aborts a request from another thread or a signal handler: the
    worker's long poll, so that a graceful stop takes no new task.

    No lock, on purpose: a signal handler runs on the main thread, which may
    be the one inside request(), and would deadlock on one. The two sides
    each write their flag before reading the other's (the GIL orders them):
    either abort() sees the connection and shuts its socket, or enter() sees
    ``aborted`` and refuses to send."""

    def __init__(self) -> None:
        self.aborted = False
        self.conn: Optional[http.client.HTTPConnection] = None

    def enter(self, conn: http.client.HTTPConnection) -> None:
        if conn.sock is None:
            conn.connect()  # a socket to shut down before anything is sent
        self.conn = conn
        if self.aborted:
            raise ConnectionAbortedError("aborted")

    def abort_if_idle(self) -> bool:
        """Aborts the request unless its answer has begun to arrive (then it
        is left to be read: it may hold tasks leased already). Returns
        whether it aborted."""
        conn = self.conn
        sock = getattr(conn, "sock", None) if conn is not None else None
        if sock is not None:
            try:
                readable, _, _ = select.select([sock], [], [], 0)
            except (OSError, ValueError):
                readable = []
            if readable:
                return False
        self.abort()
        return True

    def abort(self) -> None:
        self.aborted = True
        conn = self.conn
        sock = getattr(conn, "sock", None) if conn is not None else None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


Json = Dict[str, Any]
