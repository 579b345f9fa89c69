#!/usr/bin/env python3
"""Rough drain figure: N echo tasks through dtq.Worker at a concurrency.

    DTQ_API_URL=http://127.0.0.1:8000 python3 clients/python/tests/drain_bench.py [--tasks 5000] [--concurrency 50]

Submits the tasks first (batches of 1,000) to a fresh queue, then starts one
Worker and times from its start until the queue's succeeded_total reaches N.
Not a test (its name does not start with test_): a measurement to run by hand
against a local `dtq serve` with its own redis-server.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dtq  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tasks", type=int, default=5000)
    p.add_argument("--concurrency", type=int, default=50)
    a = p.parse_args()
    c = dtq.Client()
    q = "drain-" + uuid.uuid4().hex[:8]
    for i in range(0, a.tasks, 1000):
        items = c.submit_many([{"type": "echo", "payload": {"i": j}, "queue": q}
                               for j in range(i, min(i + 1000, a.tasks))])
        bad = [x.error for x in items if not x.ok]
        if bad:
            raise SystemExit("submit failed: %s" % bad[0])
    w = dtq.Worker(queues=[q], concurrency=a.concurrency, poll_seconds=1)
    w.register("echo", lambda payload, ctx: {"echo": payload, "attempt": ctx.attempt})
    t0 = time.monotonic()
    th = threading.Thread(target=w.run, daemon=True)
    th.start()
    while c.queues.get(q).succeeded_total < a.tasks:
        time.sleep(0.01)
    took = time.monotonic() - t0
    w.stop()
    th.join(30)
    print("%d echo tasks at concurrency %d: %.2f s, %.0f tasks/s" % (a.tasks, a.concurrency, took, a.tasks / took))


if __name__ == "__main__":
    main()
