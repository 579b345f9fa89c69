#!/usr/bin/env python3
"""The conformance worker of the Python library (conformance/README.md).

    python3 clients/python/tests/conformance_worker.py --url URL --queues a,b [--types t1,t2]
        [--concurrency 4] [--lease-seconds 30] [--worker NAME] [--grace-seconds 10] [--redis URL]

It runs the library from this checkout (clients/python, not an installed
copy) with the conformance handlers, printing one JSON line per event of the
worker: {"event": "ready"} once it polls, {"event": "stopped"} last on a
graceful stop (SIGTERM or SIGINT), then exits 0; the rare events (lost,
cancel_seen, timeout …) too, and with --verbose those of every task.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any, Dict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dtq  # noqa: E402  (the checkout's, by the path above)

_out = threading.Lock()

# The events of every task, printed only with --verbose: a line per task
# costs a drain a third of its speed (bench/httpworkers runs this worker),
# and the suite reads only ready and stopped. The rare ones (lost,
# cancel_seen, timeout, suspended, abandoned, error) are always printed.
PER_TASK = {"leased", "done", "failed"}
_verbose = False


def emit(event: str, **fields: Any) -> None:
    """Prints the event as one JSON line (whole lines, from any thread)."""
    if event in PER_TASK and not _verbose:
        return
    fields["event"] = event
    line = json.dumps(fields, default=str) + "\n"
    with _out:
        sys.stdout.write(line)
        sys.stdout.flush()


def obj(payload: Any) -> Dict[str, Any]:
    """The payload as an object; null is {}."""
    if payload is None:
        return {}
    if not isinstance(payload, dict):
        raise dtq.Permanent("payload: must be a JSON object")
    return payload


# bench/httpworkers' latency run: with DTQ_BENCH_STARTS set, echo appends
# "<task id> <unix time>" to that file as it starts (the handler's clock).
_starts = os.environ.get("DTQ_BENCH_STARTS")


def echo(payload: Any, ctx: dtq.Context) -> Any:
    if _starts:
        line = "%s %.6f\n" % (ctx.task_id, time.time())
        with _out, open(_starts, "a") as f:
            f.write(line)
    return {"echo": payload, "attempt": ctx.attempt}


def fail(payload: Any, ctx: dtq.Context) -> Any:
    p = obj(payload)
    times = p.get("times")
    if times is None or ctx.attempt <= times:
        msg = "fail on attempt %d" % ctx.attempt
        if p.get("permanent"):
            raise dtq.Permanent(msg)
        if p.get("retry_after") is not None:
            raise dtq.RetryAfter(p["retry_after"], msg)
        raise RuntimeError(msg)
    return {"attempt": ctx.attempt}


class Cancelled(Exception):
    """The sleep handler's failure once its task is cancelled or timed out."""

    def __init__(self) -> None:
        super().__init__("cancelled")


def nap_until_cancelled(ctx: dtq.Context, seconds: float) -> None:
    """Sleeps in slices of at most 50 ms, failing with "cancelled" as soon as
    the task's cancellation is requested or its timeout passes."""
    slept = 0.0
    while slept < seconds:
        piece = min(0.05, seconds - slept)
        if ctx.wait_cancelled(piece):
            raise Cancelled()
        slept += piece
    if ctx.cancelled:
        raise Cancelled()


def sleep(payload: Any, ctx: dtq.Context) -> Any:
    seconds = obj(payload).get("seconds", 1)
    nap_until_cancelled(ctx, seconds)
    return {"slept": seconds}


def progress(payload: Any, ctx: dtq.Context) -> Any:
    """Reports 0.5 "half", then sleeps seconds (default 0) as sleep does."""
    ctx.progress(0.5, "half")
    nap_until_cancelled(ctx, obj(payload).get("seconds", 0))
    return {"progressed": True}


def steps(payload: Any, ctx: dtq.Context) -> Any:
    ran = []

    def one() -> Any:
        ran.append("one")
        return {"n": 1}

    def two() -> Any:
        ran.append("two")
        return {"n": 2}

    r1 = ctx.step("one", one)
    if ctx.attempt == 1 and obj(payload).get("fail_between"):
        raise dtq.RetryAfter(0.1, "failing between the steps on attempt 1")
    r2 = ctx.step("two", two)
    return {"one": r1, "two": r2, "ran": ran}


def nap(payload: Any, ctx: dtq.Context) -> Any:
    ctx.sleep("nap", obj(payload).get("seconds", 1))
    return {"napped": True, "attempt": ctx.attempt}


def wait(payload: Any, ctx: dtq.Context) -> Any:
    try:
        return {"signal": ctx.wait_for("go", obj(payload).get("timeout", 60))}
    except dtq.WaitTimedOut:
        return {"timed_out": True}


HANDLERS = {"echo": echo, "fail": fail, "sleep": sleep, "progress": progress, "steps": steps, "nap": nap,
            "wait": wait}


def main() -> int:
    p = argparse.ArgumentParser(description="the dtq Python library's conformance worker")
    p.add_argument("--url", default=None)
    p.add_argument("--redis", default=None, help="ignored: the Python library speaks HTTP")
    p.add_argument("--queues", default="default")
    p.add_argument("--types", default="")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--lease-seconds", type=float, default=30)
    p.add_argument("--worker", default=None)
    p.add_argument("--grace-seconds", type=float, default=10)
    p.add_argument("--verbose", action="store_true", help="print leased, done and failed for every task too")
    a = p.parse_args()
    global _verbose
    _verbose = a.verbose
    types = [t for t in a.types.split(",") if t] or sorted(HANDLERS)
    unknown = [t for t in types if t not in HANDLERS]
    if unknown:
        p.error("--types: no handler for %s" % ", ".join(unknown))
    w = dtq.Worker(a.url, queues=[q for q in a.queues.split(",") if q], concurrency=a.concurrency,
                   lease_seconds=a.lease_seconds, name=a.worker, grace_seconds=a.grace_seconds, on_event=emit)
    for t in types:
        w.register(t, HANDLERS[t])
    w.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
