#!/usr/bin/env python3
"""A consumer of dtq's reliable message queue in Python, standard library only.

It leases messages of a queue's topics over dtq's HTTP API
(/api/v1/mq/{queue}/leases, docs/workers.md), in the consumer group it
shares with Go subscriptions, handles each in a thread, extends the lease
while the handler runs, then settles it: ack on success, term (dead
letter) for a message the handler refuses for good, nak with a delay
otherwise. A lease lost meanwhile (409) is dropped: another holder owns
the message.

    python3 consumer.py --url http://localhost:8000 --queue orders --topics new,retry

--url defaults to $DTQ_API_URL, else http://localhost:8000, and
$DTQ_API_KEY is sent as X-API-Key, as in worker.py.

The example handler reads the message as text: "poison..." is termed,
"slow:<ms>" sleeps that long, "fail:<n>" fails its first n deliveries,
anything else succeeds. It prints one JSON line per event: ready, leased,
acked, nacked, termed, lost.
"""

import argparse
import os
import threading
import time

from worker import API, emit


class Refused(Exception):
    """The message can never be handled: dead-letter it."""


def handle(msg):
    """The example handler: see the module's text."""
    text = msg.get("data", "")
    if text.startswith("poison"):
        raise Refused("poison message")
    if text.startswith("slow:"):
        time.sleep(int(text[5:]) / 1000.0)
    if text.startswith("fail:") and msg["deliveries"] <= int(text[5:]):
        raise RuntimeError("delivery %d fails" % msg["deliveries"])


class Consumer:
    def __init__(self, api, queue, name, topics, concurrency, lease_seconds):
        self.api, self.base, self.name = api, "/api/v1/mq/" + queue, name
        self.topics, self.concurrency, self.lease_seconds = topics, concurrency, lease_seconds
        self.free = threading.Semaphore(concurrency)

    def run(self):
        emit("ready", worker=self.name, url=self.api.url)
        while True:
            self.free.acquire()
            n = 1
            while n < self.concurrency and self.free.acquire(blocking=False):
                n += 1
            body = {"worker": self.name, "topics": self.topics, "max": n, "wait_seconds": 5,
                    "lease_seconds": self.lease_seconds}
            try:
                status, ans = self.api.post(self.base + "/leases", body, timeout=40)
            except OSError as e:
                status, ans = 0, {"error": {"message": str(e)}}
            leases = ans["leases"] if status == 200 else []
            if status != 200:
                emit("error", status=status, error=ans.get("error", {}).get("message"))
                time.sleep(1)
            for _ in range(n - len(leases)):
                self.free.release()
            for lease in leases:
                threading.Thread(target=self.execute, args=(lease,), daemon=True).start()

    def execute(self, lease):
        try:
            self.run_one(lease)
        finally:
            self.free.release()

    def run_one(self, lease):
        token = lease["lease"]
        emit("leased", key=lease["key"], topic=lease["topic"], deliveries=lease["deliveries"])
        lost, done = threading.Event(), threading.Event()
        extender = threading.Thread(target=self.extend, args=(token, lease, lost, done), daemon=True)
        extender.start()
        try:
            handle(lease)
            verb, body, event = "ack", None, "acked"
        except Refused as e:
            verb, body, event = "term", {"reason": str(e)}, "termed"
        except Exception as e:  # noqa: BLE001 — any other failure is delivered again
            verb, body, event = "nak", {"delay_seconds": 0.05}, "nacked"
        done.set()
        extender.join()
        if lost.is_set():
            return
        deadline = time.monotonic() + self.lease_seconds
        while True:
            try:
                status, _ = self.api.post("%s/leases/%s/%s" % (self.base, token, verb), body)
            except OSError:
                status = 0
            if status == 200:
                emit(event, key=lease["key"], deliveries=lease["deliveries"])
                return
            if status == 409 or time.monotonic() > deadline:
                emit("lost", key=lease["key"], on=verb)
                return
            time.sleep(0.2)

    def extend(self, token, lease, lost, done):
        while not done.wait(self.lease_seconds / 4.0):
            try:
                status, _ = self.api.post("%s/leases/%s/extend" % (self.base, token))
            except OSError:
                continue
            if status == 409:
                lost.set()
                emit("lost", key=lease["key"], on="extend")
                return


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
    c = Consumer(API(a.url, os.environ.get("DTQ_API_KEY")), a.queue, a.worker, a.topics.split(","),
                 a.concurrency, a.lease_seconds)
    try:
        c.run()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
