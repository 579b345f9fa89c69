"""What the tests share: the library from this checkout, the server they run
against ($DTQ_API_URL, a real `dtq serve`; clients/python/python_test.go
starts one), fresh queue names, and waits."""

from __future__ import annotations

import os
import sys
import threading
import time
import unittest
import uuid
from typing import Any, Callable, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)  # clients/python
REPO_ROOT = os.path.dirname(os.path.dirname(PACKAGE_ROOT))
sys.path.insert(0, PACKAGE_ROOT)

import dtq  # noqa: E402  (this checkout's)

if not os.environ.get("DTQ_API_URL"):
    # A missing server is a failure, never a skip: the tests exist to run.
    raise RuntimeError("DTQ_API_URL is not set: these tests run against a real `dtq serve` "
                       "(go test ./clients/python starts one)")

URL = os.environ["DTQ_API_URL"]


def fresh_queue(prefix: str = "py") -> str:
    """A queue name no other test uses."""
    return "%s-%s" % (prefix, uuid.uuid4().hex[:12])


def client() -> dtq.Client:
    return dtq.Client()


def eventually(what: str, cond: Callable[[], Any], timeout: float = 15.0, every: float = 0.02) -> Any:
    """Polls cond until it returns something true (returned), failing after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("%s: not true within %.1f s (last: %r)" % (what, timeout, v))
        time.sleep(every)


def wait_status(c: dtq.Client, task_id: str, *statuses: str, timeout: float = 15.0) -> dtq.Task:
    """The task once its status is one of statuses."""
    last: list = [None]

    def check() -> Optional[dtq.Task]:
        t = c.get(task_id)
        last[0] = t.status
        return t if t.status in statuses else None
    try:
        return eventually("task %s %s" % (task_id, "/".join(statuses)), check, timeout)
    except AssertionError:
        raise AssertionError("task %s is %s, not %s after %.1f s" % (task_id, last[0], "/".join(statuses), timeout))


class RunningWorker:
    """A dtq.Worker run on a thread for a test (stop() joins it)."""

    def __init__(self, worker: dtq.Worker) -> None:
        self.worker = worker
        self.events: list = []
        self.error: Optional[BaseException] = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.worker.run()
        except BaseException as e:  # noqa: BLE001
            self.error = e

    def stop(self, timeout: float = 30.0) -> None:
        self.worker.stop()
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise AssertionError("the worker did not stop within %.0f s" % timeout)
        if self.error is not None:
            raise AssertionError("the worker failed: %r" % (self.error,))


def start_worker(test: unittest.TestCase, queue: str, handlers: dict, **opts: Any) -> RunningWorker:
    """Runs a Worker of queue with handlers ({type: fn}) until the test ends;
    its events are collected in .events."""
    events: list = []
    lock = threading.Lock()

    def sink(event: str, **fields: Any) -> None:
        with lock:
            events.append(dict(fields, event=event))
    opts.setdefault("poll_seconds", 2)
    w = dtq.Worker(queues=[queue], on_event=sink, **opts)
    for t, fn in handlers.items():
        w.register(t, fn)
    rw = RunningWorker(w)
    rw.events = events
    test.addCleanup(lambda: rw.thread.is_alive() and rw.stop())
    eventually("the worker is ready", lambda: any(e["event"] == "ready" for e in events), 10)
    return rw


class Proxy:
    """A TCP forwarder to the server that a test can take down and bring
    back on the same port: the server "unreachable" without stopping it."""

    def __init__(self, upstream: str) -> None:
        import socket
        import urllib.parse
        u = urllib.parse.urlsplit(upstream)
        self._up = (u.hostname or "127.0.0.1", u.port or 80)
        self._socket = socket
        self._conns: list = []
        self._lock = threading.Lock()
        self._listener = None
        self.port = 0
        self.up()
        self.url = "http://127.0.0.1:%d" % self.port

    def up(self) -> None:
        s = self._socket.socket()
        s.setsockopt(self._socket.SOL_SOCKET, self._socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(64)
        self.port = s.getsockname()[1]
        self._listener = s
        threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def down(self) -> None:
        """Closes the listener and every connection: calls fail until up()."""
        if self._listener is not None:
            try:
                self._listener.shutdown(self._socket.SHUT_RDWR)  # wakes the accept (close alone does not)
            except OSError:
                pass
            self._listener.close()
            self._listener = None
        with self._lock:
            conns, self._conns = self._conns, []
        for c in conns:
            try:
                c.shutdown(self._socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()

    def _accept(self, s) -> None:
        while True:
            try:
                client, _ = s.accept()
            except OSError:
                return
            try:
                server = self._socket.create_connection(self._up)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(a, b) -> None:
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        for x in (a, b):
            try:
                x.close()
            except OSError:
                pass
