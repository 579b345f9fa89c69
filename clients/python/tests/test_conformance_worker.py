"""The conformance worker (tests/conformance_worker.py) as a process: its
JSON lines, its handlers, and the graceful stop on SIGTERM/SIGINT, where
Worker.run() on the main thread installs the signal handlers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import unittest
from typing import List

from _support import HERE, URL, client, eventually, fresh_queue, wait_status


class Proc:
    """The conformance worker running, its JSON lines collected."""

    def __init__(self, *args: str) -> None:
        self.p = subprocess.Popen([sys.executable, os.path.join(HERE, "conformance_worker.py"), "--url", URL, *args],
                                  stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        self.lines: List[dict] = []
        self.raw: List[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        eventually("ready", lambda: any(e.get("event") == "ready" for e in self.lines), 20)

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            self.raw.append(line)
            self.lines.append(json.loads(line))

    def kill(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()
        self.reader.join(5)
        if self.p.stdout is not None:
            self.p.stdout.close()


class ConformanceWorkerTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.addCleanup(self.c.close)
        self.q = fresh_queue("conf")

    def start(self, *args: str) -> Proc:
        p = Proc("--queues", self.q, *args)
        self.addCleanup(p.kill)
        return p

    def test_handlers(self) -> None:
        self.start("--concurrency", "4", "--lease-seconds", "2", "--worker", "conf-" + self.q)
        cases = [
            ("echo", {"x": 1}, "SUCCEEDED", {"echo": {"x": 1}, "attempt": 1}),
            ("fail", {"times": 1, "retry_after": 0.1}, "SUCCEEDED", {"attempt": 2}),
            ("fail", {"permanent": True}, "DEAD", None),
            ("progress", None, "SUCCEEDED", {"progressed": True}),
            ("steps", {"fail_between": True}, "SUCCEEDED", {"one": {"n": 1}, "two": {"n": 2}, "ran": ["two"]}),
            ("nap", {"seconds": 0.3}, "SUCCEEDED", {"napped": True, "attempt": 1}),
            ("wait", {"timeout": 0.3}, "SUCCEEDED", {"timed_out": True}),
            ("sleep", {"seconds": 0.2}, "SUCCEEDED", {"slept": 0.2}),
        ]
        ids = [self.c.submit(t, p, queue=self.q).id for t, p, _, _ in cases]
        for (t, p, status, result), tid in zip(cases, ids):
            got = wait_status(self.c, tid, status, timeout=20)
            if status == "SUCCEEDED":
                self.assertEqual(got.result, result, t)
            else:
                self.assertEqual(got.last_error, "fail on attempt 1")
        timed = self.c.submit("sleep", {"seconds": 30}, queue=self.q, timeout=0.5, max_attempts=1)
        self.assertEqual(wait_status(self.c, timed.id, "DEAD", timeout=10).attempt, 1)
        waiting = self.c.submit("wait", {"timeout": 60}, queue=self.q)
        eventually("waiting", lambda: self.c.get(waiting.id).suspended)
        self.c.signal(waiting.id, "go", [1, 2])
        self.assertEqual(wait_status(self.c, waiting.id, "SUCCEEDED").result, {"signal": [1, 2]})

    def test_prints_per_task_events_only_when_verbose(self) -> None:
        quiet = self.start()
        t = self.c.submit("echo", 1, queue=self.q)
        wait_status(self.c, t.id, "SUCCEEDED")
        quiet.p.send_signal(signal.SIGTERM)
        self.assertEqual(quiet.p.wait(15), 0)
        time.sleep(0.1)
        self.assertEqual([e["event"] for e in quiet.lines], ["ready", "stopped"])

    def test_types_filter(self) -> None:
        self.start("--types", "echo")
        other = self.c.submit("fail", queue=self.q)
        mine = self.c.submit("echo", 1, queue=self.q)
        wait_status(self.c, mine.id, "SUCCEEDED")
        time.sleep(0.3)
        self.assertEqual(self.c.get(other.id).status, "QUEUED")

    def test_stale_lease_is_dropped(self) -> None:
        a = self.start("--lease-seconds", "1", "--worker", "a-" + self.q, "--verbose")
        t = self.c.submit("sleep", {"seconds": 2}, queue=self.q)
        wait_status(self.c, t.id, "RUNNING")
        a.p.send_signal(signal.SIGSTOP)
        try:
            b = self.start("--lease-seconds", "1", "--worker", "b-" + self.q)
            eventually("taken over by b", lambda: self.c.get(t.id).worker == "http:b-" + self.q, 15)
        finally:
            a.p.send_signal(signal.SIGCONT)
        done = wait_status(self.c, t.id, "SUCCEEDED", timeout=15)
        self.assertEqual(done.worker, "http:b-" + self.q)
        # ["lost", "succeeded"], or with one more "lost" when a's long poll,
        # in flight while it was frozen, took the task back before b did.
        outcomes = [h.outcome for h in done.history]
        self.assertEqual(outcomes[-1], "succeeded")
        self.assertTrue(1 <= outcomes.count("lost") == len(outcomes) - 1, outcomes)
        eventually("a drops its lost lease", lambda: any(
            e.get("event") == "lost" and e.get("task") == t.id for e in a.lines), 10)
        self.assertTrue(any(e.get("event") == "leased" and e.get("task") == t.id for e in a.lines))  # --verbose
        self.assertFalse(any(e.get("event") in ("done", "failed") and e.get("task") == t.id for e in a.lines))
        b.p.send_signal(signal.SIGTERM)
        self.assertEqual(b.p.wait(15), 0)
        after = self.c.submit("echo", 5, queue=self.q)  # a goes on working
        got = wait_status(self.c, after.id, "SUCCEEDED", timeout=15)
        self.assertEqual(got.worker, "http:a-" + self.q)

    def test_sigterm_stops_gracefully(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(sig=sig.name):
                p = self.start("--grace-seconds", "10")
                running = self.c.submit("sleep", {"seconds": 1}, queue=self.q)
                wait_status(self.c, running.id, "RUNNING")
                p.p.send_signal(sig)
                time.sleep(0.5)
                after = self.c.submit("echo", queue=self.q)
                self.assertEqual(p.p.wait(15), 0)
                time.sleep(0.1)
                self.assertEqual(p.lines[-1]["event"], "stopped")
                got = self.c.get(running.id)
                self.assertEqual((got.status, got.crashes), ("SUCCEEDED", 0))
                self.assertEqual(self.c.get(after.id).status, "QUEUED")
                self.c.cancel(after.id)


if __name__ == "__main__":
    unittest.main()
