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
