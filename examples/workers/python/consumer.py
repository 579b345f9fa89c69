#!/usr/bin/env python3
"""A consumer of dtq's reliable message queue in Python, on the dtq library.

It leases messages of a queue's topics (dtq.MessageQueue over
/api/v1/mq/{queue}/leases, docs/workers.md) in the consumer group it shares
with Go subscriptions, handles each in a thread, extends the lease while the
handler runs, then settles it: ack on success, term (dead letter) for a
message the handler refuses for good, nak with a short delay otherwise. A
lease lost meanwhile (dtq.LeaseLost) is dropped: another holder owns it.

    python3 consumer.py --url http://localhost:8000 --queue orders --topics new,retry

--url defaults to $DTQ_API_URL, else http://localhost:8000; $DTQ_API_KEY is
sent as X-API-Key. The example handler reads the message as text:
"poison..." is termed, "slow:<ms>" sleeps that long, "fail:<n>" fails its
first n deliveries, anything else succeeds. It prints one JSON line per
event: ready, leased, acked, nacked, termed, lost.
"""

import argparse
import json
import os
import sys
import threading
import time

try:
    import dtq
except ImportError:  # not installed: the library of this checkout
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "clients", "python"))
    import dtq


class Refused(Exception):
    """The message can never be handled: dead-letter it."""


def handle(m):
    """The example handler: see the module's text."""
    text = m.text
    if text.startswith("poison"):
        raise Refused("poison message")
    if text.startswith("slow:"):
        time.sleep(int(text[5:]) / 1000.0)
    if text.startswith("fail:") and m.deliveries <= int(text[5:]):
        raise RuntimeError("delivery %d fails" % m.deliveries)


_out = threading.Lock()


def emit(event, **fields):
    """Prints the event as one JSON line, whole, whichever thread calls."""
    line = json.dumps(dict(fields, event=event)) + "\n"
    with _out:
        sys.stdout.write(line)
        sys.stdout.flush()


def consume(mq, m, lease_seconds):
    """Handles m, extending its lease meanwhile, then settles it once."""
    emit("leased", key=m.key, topic=m.topic, deliveries=m.deliveries)
    done = threading.Event()

    def extend():
        while not done.wait(lease_seconds / 4.0):
            try:
                m.extend()
            except dtq.LeaseLost:
                return
            except dtq.DtqError:
                continue  # the next try, before the deadline

    threading.Thread(target=extend, daemon=True).start()
    try:
        handle(m)
        settle, event = m.ack, "acked"
    except Refused as e:
        reason = str(e)
        settle, event = (lambda: m.term(reason)), "termed"
    except Exception:  # noqa: BLE001 — any other failure is delivered again
        settle, event = (lambda: m.nak(0.05)), "nacked"
    done.set()
    try:
        settle()
        emit(event, key=m.key, deliveries=m.deliveries)
    except dtq.LeaseLost:
        emit("lost", key=m.key)


def parse_args(argv=None):
    """The command line (argv, default sys.argv[1:]) with its defaults."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", default=os.environ.get("DTQ_API_URL") or "http://localhost:8000",
                   help="dtq's API (default: $DTQ_API_URL, else http://localhost:8000)")
    p.add_argument("--worker", default="py-%d" % os.getpid())
    p.add_argument("--queue", default="default")
    p.add_argument("--topics", default="default", help="comma-separated, highest priority first")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--lease-seconds", type=float, default=30)
    return p.parse_args(argv)


def main():
    a = parse_args()
    mq = dtq.MessageQueue(a.queue, a.url, worker=a.worker)
    free = threading.Semaphore(a.concurrency)
    emit("ready", worker=a.worker, url=a.url)

    def run(m):
        try:
            consume(mq, m, a.lease_seconds)
        finally:
            free.release()

    while True:
        free.acquire()
        n = 1
        while n < a.concurrency and free.acquire(blocking=False):
            n += 1
        try:
            msgs = mq.receive(a.topics.split(","), max=n, wait=5, lease_seconds=a.lease_seconds)
        except dtq.DtqError as e:
            emit("error", error=str(e))
            msgs = []
            time.sleep(1)
        for _ in range(n - len(msgs)):
            free.release()
        for m in msgs:
            threading.Thread(target=run, args=(m,), daemon=True).start()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
