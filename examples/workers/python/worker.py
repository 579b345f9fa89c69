#!/usr/bin/env python3
"""A dtq worker in Python, on the dtq library (clients/python, docs/python.md).

    pip install ./clients/python        # or run it from the checkout as is
    python3 worker.py --url http://localhost:8000 --queues default --concurrency 4

--url defaults to $DTQ_API_URL, else http://localhost:8000 (where `dtq
serve` listens); $DTQ_API_KEY is sent as X-API-Key. It prints one JSON line
per event: ready, leased, done, failed, lost, cancel_seen (and stopped).

Its handlers are the Go binary's (examples/tasks), with the same payloads
and results, so a task gives the same answer whoever runs it: echo, sleep
{"seconds"}, flaky {"fail_times"}, always_fail {"permanent"}.
"""

import argparse
import json
import os
import sys
import threading

try:
    import dtq
except ImportError:  # not installed: the library of this checkout
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "clients", "python"))
    import dtq


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", default=os.environ.get("DTQ_API_URL") or "http://localhost:8000",
                   help="dtq's API (default: $DTQ_API_URL, else http://localhost:8000)")
    p.add_argument("--worker", default="py-%d" % os.getpid())
    p.add_argument("--queues", default="default", help="comma-separated")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--lease-seconds", type=float, default=30)
    return p.parse_args(argv)


_out = threading.Lock()


def print_event(event, **fields):
    """Prints the event as one JSON line, whole, whichever thread calls."""
    line = json.dumps(dict(fields, event=event)) + "\n"
    with _out:
        sys.stdout.write(line)
        sys.stdout.flush()


def fields(payload):
    """The payload as an object (null is {})."""
    if payload is None:
        return {}
    if not isinstance(payload, dict):
        raise dtq.Permanent("payload: must be a JSON object")
    return payload


HANDLERS = {}


def handler(task_type):
    def register(fn):
        HANDLERS[task_type] = fn
        return fn
    return register


@handler("echo")
def echo(payload, ctx):
    return {"echo": payload, "attempt": ctx.attempt}


@handler("sleep")
def sleep(payload, ctx):
    secs = fields(payload).get("seconds", 1)
    if isinstance(secs, bool) or not isinstance(secs, (int, float)) or not 0 <= secs <= 3600:
        raise dtq.Permanent("seconds must be 0-3600, got %s" % json.dumps(secs))
    ctx.progress(0, "sleeping %s s" % json.dumps(secs))
    if ctx.wait_cancelled(secs):
        raise dtq.Cancelled("cancelled")
    return {"slept_seconds": secs}


@handler("flaky")
def flaky(payload, ctx):
    n = fields(payload).get("fail_times", 2)
    if ctx.attempt <= n:
        raise dtq.RetryAfter(0.05, "flaky: failing attempt %d of the first %d" % (ctx.attempt, n))
    return {"succeeded_on_attempt": ctx.attempt}


@handler("always_fail")
def always_fail(payload, ctx):
    if fields(payload).get("permanent"):
        raise dtq.Permanent("always_fail: this task always fails")
    raise RuntimeError("always_fail: this task always fails")


def main():
    a = parse_args()
    worker = dtq.Worker(a.url, queues=a.queues.split(","), concurrency=a.concurrency, lease_seconds=a.lease_seconds,
                        name=a.worker, on_event=print_event)
    for task_type, fn in HANDLERS.items():
        worker.register(task_type, fn)
    worker.run()


if __name__ == "__main__":
    main()
