#!/usr/bin/env python3
"""A dtq worker in Python, on the standard library alone.

It leases tasks over dtq's HTTP API (docs/workers.md), runs each in a
thread with the handler of its task type, extends the lease while the
handler runs (and learns so of a cancellation), then completes or fails
it. A lease lost meanwhile (409) is dropped: another worker owns the task.

    python3 worker.py --url http://localhost:8000 --queues default --concurrency 4

--url defaults to $DTQ_API_URL, else http://localhost:8000 (where `dtq
serve` listens), and $DTQ_API_KEY is sent as X-API-Key: the variables the
dtq CLI reads.

Handlers are registered with @handler("type"); a handler gets the task
(a dict, as GET /api/v1/tasks/{id} shows it) and a Context, and returns
a JSON-encodable result or raises: Permanent(...) sends the task to the
dead letters at once, any other exception is retried with backoff (or
after RetryAfter(seconds, ...)). It prints one JSON line per event on
standard output: ready, leased, done, failed, lost, cancel_seen.

The example handlers are the Go binary's (examples/tasks), with the same
payloads and results, so a task gives the same answer whoever runs it:
echo, sleep {"seconds"}, flaky {"fail_times"}, always_fail {"permanent"}.
"""

import argparse
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request

HANDLERS = {}


def handler(task_type):
    """Registers the decorated function as the handler of task_type."""
    def register(fn):
        HANDLERS[task_type] = fn
        return fn
    return register


class Permanent(Exception):
    """A failure that retrying cannot fix: the task goes DEAD at once."""


class RetryAfter(Exception):
    """A retryable failure to retry no sooner than seconds from now."""

    def __init__(self, seconds, message):
        super().__init__(message)
        self.seconds = seconds


class Cancelled(Exception):
    """Raised by Context.check once the task's cancellation was requested."""


class Context:
    """What a handler knows of its lease while it runs."""

    def __init__(self, api=None, token=None, task_id=None):
        self.cancelled = threading.Event()
        self.lost = threading.Event()
        self._api, self._token, self._task = api, token, task_id

    def progress(self, fraction, note=""):
        """Reports how far the task got (fraction 0-1): shown by GET
        /api/v1/tasks/{id}, the events and the dashboard while it runs. A
        report that cannot be made is dropped: progress is a hint."""
        try:
            status, _ = self._api.post("/api/v1/leases/%s/progress" % self._token, {"fraction": fraction, "note": note})
        except OSError:
            return
        if status == 409 and not self.lost.is_set():
            self.lost.set()
            emit("lost", task=self._task, on="progress")

    def check(self):
        """Raises Cancelled once the task was cancelled or its lease lost."""
        if self.cancelled.is_set() or self.lost.is_set():
            raise Cancelled("cancelled")

    def sleep(self, seconds):
        """Sleeps up to seconds, returning early (Cancelled) on a cancellation."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.check()
            time.sleep(min(0.02, max(0.0, end - time.monotonic())))
        self.check()


# The example handlers: those of the Go binary (examples/tasks/tasks.go),
# with the same payloads and results.

def payload(task):
    """The task's payload; an absent one (null) is {}."""
    p = task.get("payload")
    if p is None:
        return {}
    if not isinstance(p, dict):
        raise Permanent("payload: must be a JSON object")
    return p


@handler("echo")
def echo(task, ctx):
    """Returns {"echo": payload, "attempt": n}."""
    return {"echo": task.get("payload"), "attempt": task["attempt"]}


@handler("sleep")
def sleep(task, ctx):
    """Sleeps payload["seconds"] (default 1, 0-3600), returning early on a
    cancellation."""
    secs = payload(task).get("seconds", 1)
    if isinstance(secs, bool) or not isinstance(secs, (int, float)) or secs < 0 or secs > 3600:
        raise Permanent("seconds must be 0-3600, got %s" % json.dumps(secs))
    ctx.progress(0, "sleeping %s s" % json.dumps(secs))
    ctx.sleep(secs)
    return {"slept_seconds": secs}


@handler("flaky")
def flaky(task, ctx):
    """Fails its first payload["fail_times"] attempts (default 2), then
    succeeds. (It asks for a retry after 50 ms, where the Go handler takes
    the default backoff.)"""
    n = payload(task).get("fail_times", 2)
    if task["attempt"] <= n:
        raise RetryAfter(0.05, "flaky: failing attempt %d of the first %d" % (task["attempt"], n))
    return {"succeeded_on_attempt": task["attempt"]}


@handler("always_fail")
def always_fail(task, ctx):
    """Fails every attempt; with payload["permanent"] the failure is
    permanent."""
    if payload(task).get("permanent"):
        raise Permanent("always_fail: this task always fails")
    raise RuntimeError("always_fail: this task always fails")


class API:
    """Calls dtq's HTTP API."""

    def __init__(self, url, api_key):
        self.url = url.rstrip("/")
        self.api_key = api_key

    def post(self, path, body=None, timeout=30):
        """POSTs body as JSON; returns (status, decoded answer). A failure to
        connect raises OSError."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method="POST")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.api_key:
            req.add_header("X-API-Key", self.api_key)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as res:
                return res.status, json.loads(res.read() or b"null")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, {"error": {"message": raw.decode(errors="replace")}}


def emit(event, **fields):
    fields["event"] = event
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


class Worker:
    def __init__(self, api, name, queues, types, concurrency, lease_seconds):
        self.api = api
        self.name = name
        self.queues = queues
        self.types = types
        self.concurrency = concurrency
        self.lease_seconds = lease_seconds
        self.free = threading.Semaphore(concurrency)
        self.running = 0
        self.lock = threading.Lock()

    def run(self):
        emit("ready", worker=self.name, url=self.api.url)
        while True:
            self.free.acquire()  # at least one free slot
            n = 1
            while n < self.concurrency and self.free.acquire(blocking=False):
                n += 1
            leases = self.lease(n)
            for _ in range(n - len(leases)):
                self.free.release()
            for lease in leases:
                threading.Thread(target=self.execute, args=(lease,), daemon=True).start()

    def lease(self, n):
        body = {"worker": self.name, "queues": self.queues, "max": n, "wait_seconds": 5,
                "lease_seconds": self.lease_seconds}
        if self.types:
            body["task_types"] = self.types
        try:
            status, ans = self.api.post("/api/v1/leases", body, timeout=40)
        except OSError as e:
            emit("error", error=str(e))
            time.sleep(1)
            return []
        if status != 200:
            emit("error", status=status, error=ans.get("error", {}).get("message"))
            time.sleep(1)
            return []
        return ans["leases"]

    def execute(self, lease):
        try:
            self.run_one(lease)
        finally:
            self.free.release()

    def run_one(self, lease):
        token, task = lease["lease"], lease["task"]
        emit("leased", task=task["id"], type=task["task_type"], attempt=task["attempt"])
        ctx = Context(self.api, token, task["id"])
        done = threading.Event()
        extender = threading.Thread(target=self.extend, args=(token, task, ctx, done), daemon=True)
        extender.start()
        fn = HANDLERS.get(task["task_type"])
        try:
            if fn is None:
                raise Permanent("no handler for task type %r in this worker" % task["task_type"])
            outcome = ("complete", {"result": fn(task, ctx)})
        except Permanent as e:
            outcome = ("fail", {"error": str(e), "class": "permanent"})
        except RetryAfter as e:
            outcome = ("fail", {"error": str(e), "class": "retryable", "retry_after_seconds": e.seconds})
        except Exception as e:  # noqa: BLE001 — any other failure is retried
            outcome = ("fail", {"error": "%s: %s" % (type(e).__name__, e), "class": "retryable"})
        done.set()
        extender.join()
        if ctx.lost.is_set():
            return
        self.report(token, task, outcome)

    def extend(self, token, task, ctx, done):
        # every quarter of the lease's time, as a Go worker renews
        while not done.wait(self.lease_seconds / 4.0):
            try:
                status, ans = self.api.post("/api/v1/leases/%s/extend" % token)
            except OSError:
                continue  # the next try, before the deadline
            if status == 409:
                if not ctx.lost.is_set():
                    ctx.lost.set()
                    emit("lost", task=task["id"], on="extend")
                return
            if status == 200 and ans.get("cancel_requested") and not ctx.cancelled.is_set():
                ctx.cancelled.set()
                emit("cancel_seen", task=task["id"])

    def report(self, token, task, outcome):
        verb, body = outcome
        deadline = time.monotonic() + self.lease_seconds
        while True:
            try:
                status, ans = self.api.post("/api/v1/leases/%s/%s" % (token, verb), body)
            except OSError as e:
                status, ans = 0, {"error": {"message": str(e)}}
            if status == 200:
                emit("done" if verb == "complete" else "failed", task=task["id"], status=ans.get("status"))
                return
            if status == 409:
                emit("lost", task=task["id"], on=verb)
                return
            if time.monotonic() > deadline:
                emit("error", task=task["id"], status=status, error=ans.get("error", {}).get("message"))
                return
            time.sleep(0.2)  # Redis or the server away: try again (recording twice is harmless)


def parse_args(argv=None):
    """The command line (argv, default sys.argv[1:]) with its defaults."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", default=os.environ.get("DTQ_API_URL") or "http://localhost:8000",
                   help="dtq's API (default: $DTQ_API_URL, else http://localhost:8000)")
    p.add_argument("--worker", default="py-%d" % os.getpid())
    p.add_argument("--queues", default="default", help="comma-separated")
    p.add_argument("--types", default="", help="task types to run, comma-separated (default: the handlers')")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--lease-seconds", type=float, default=30)
    return p.parse_args(argv)


def main():
    a = parse_args()
    types = [t for t in a.types.split(",") if t] or sorted(HANDLERS)
    w = Worker(API(a.url, os.environ.get("DTQ_API_KEY")), a.worker, a.queues.split(","), types, a.concurrency, a.lease_seconds)
    try:
        w.run()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
