"""dtq.Worker against a real `dtq serve`: outcomes, retries, progress,
cancellation, timeouts, durable steps, sleeps and signals, the graceful stop,
batch leasing and batch reporting."""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
import time
import unittest
import urllib.request

from _support import URL, Proxy, client, eventually, fresh_queue, start_worker, wait_status

import dtq


def ts(s: str) -> dt.datetime:
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00"))


def request_count(route: str) -> int:
    """dtq_http_requests_total of route, summed over status codes (/metrics)."""
    with urllib.request.urlopen(URL + "/metrics", timeout=10) as r:
        text = r.read().decode()
    total = 0
    for line in text.splitlines():
        if line.startswith("dtq_http_requests_total{") and 'route="%s"' % route in line:
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


class OutcomesTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.addCleanup(self.c.close)
        self.q = fresh_queue()

    def test_success_retryable_permanent_retry_after(self) -> None:
        def flaky(p, ctx):
            if ctx.attempt <= 2:
                raise RuntimeError("flaky on attempt %d" % ctx.attempt)
            return {"attempt": ctx.attempt}

        def doomed(p, ctx):
            raise dtq.Permanent("no way")

        def later(p, ctx):
            if ctx.attempt == 1:
                raise dtq.RetryAfter(1.5, "come back later")
            return "ok"

        def odd(p, ctx):
            raise KeyError("x")

        start_worker(self, self.q, {"echo": lambda p, ctx: {"echo": p, "attempt": ctx.attempt}, "flaky": flaky,
                                    "doomed": doomed, "later": later, "odd": odd}, concurrency=4)
        e = self.c.submit("echo", {"a": [1, 2]}, queue=self.q)
        f = self.c.submit("flaky", queue=self.q, max_attempts=5)
        d = self.c.submit("doomed", queue=self.q)
        l = self.c.submit("later", queue=self.q)
        o = self.c.submit("odd", queue=self.q, max_attempts=1)
        self.assertEqual(wait_status(self.c, e.id, "SUCCEEDED").result, {"echo": {"a": [1, 2]}, "attempt": 1})
        ft = wait_status(self.c, f.id, "SUCCEEDED", timeout=30)
        self.assertEqual(ft.result, {"attempt": 3})
        self.assertEqual([h.outcome for h in ft.history], ["retried", "retried", "succeeded"])
        self.assertEqual(ft.history[0].error, "flaky on attempt 1")
        dt_ = wait_status(self.c, d.id, "DEAD")
        self.assertEqual((dt_.attempt, dt_.last_error), (1, "no way"))
        lt = wait_status(self.c, l.id, "SUCCEEDED", timeout=30)
        gap = (ts(lt.history[1].started_at) - ts(lt.history[0].finished_at)).total_seconds()
        self.assertGreaterEqual(gap, 1.4, "the retry came %.2f s after the failure, before RetryAfter's 1.5 s" % gap)
        self.assertEqual(wait_status(self.c, o.id, "DEAD").last_error, "KeyError: 'x'")

    def test_async_handlers(self) -> None:
        async def fetch(p, ctx):
            await asyncio.sleep(0.05)
            if p == "bad":
                raise dtq.Permanent("async no")
            return {"fetched": p, "attempt": ctx.attempt}
        start_worker(self, self.q, {"fetch": fetch}, concurrency=3)
        good = [self.c.submit("fetch", i, queue=self.q).id for i in range(5)]
        bad = self.c.submit("fetch", "bad", queue=self.q).id
        for i, tid in enumerate(good):
            self.assertEqual(wait_status(self.c, tid, "SUCCEEDED").result, {"fetched": i, "attempt": 1})
        self.assertEqual(wait_status(self.c, bad, "DEAD").last_error, "async no")

    def test_progress(self) -> None:
        release = threading.Event()

        def slow(p, ctx):
            ctx.progress(0.5, "half")
            release.wait(10)
            return "done"
        start_worker(self, self.q, {"slow": slow})
        t = self.c.submit("slow", queue=self.q)
        got = eventually("progress reported", lambda: self.c.get(t.id).progress)
        self.assertEqual((got.fraction, got.note), (0.5, "half"))
        release.set()
        wait_status(self.c, t.id, "SUCCEEDED")
        with self.assertRaisesRegex(ValueError, "^fraction"):
            dtq.Context(None, "x", {}).progress(2)  # type: ignore[arg-type]

    def test_cancel_reaches_the_handler(self) -> None:
        seen = threading.Event()

        def long(p, ctx):
            if ctx.wait_cancelled(30):
                seen.set()
                raise RuntimeError("cancelled")
            return "slept"
        rw = start_worker(self, self.q, {"long": long}, lease_seconds=1)
        t = self.c.submit("long", queue=self.q)
        wait_status(self.c, t.id, "RUNNING")
        started = time.monotonic()
        self.c.cancel(t.id)
        wait_status(self.c, t.id, "CANCELLED", timeout=10)
        self.assertTrue(seen.wait(5))
        self.assertLess(time.monotonic() - started, 5)
        self.assertTrue(any(e["event"] == "cancel_seen" and e["task"] == t.id for e in rw.events))
        t2 = self.c.submit("long", queue=self.q)  # the slot is free again
        wait_status(self.c, t2.id, "RUNNING")
        self.c.cancel(t2.id)

    def test_timeout_fails_the_run(self) -> None:
        saw = threading.Event()

        def stuck(p, ctx):
            if ctx.wait_cancelled(20):
                saw.set()
            return "too late"
        start_worker(self, self.q, {"stuck": stuck})
        t = self.c.submit("stuck", queue=self.q, timeout=0.5, max_attempts=1)
        dead = wait_status(self.c, t.id, "DEAD", timeout=10)
        self.assertIn("timeout", dead.last_error)
        self.assertEqual(dead.attempt, 1)
        self.assertTrue(saw.wait(5), "the handler's ctx was not cancelled at the timeout")

    def test_extends_a_long_task(self) -> None:
        start_worker(self, self.q, {"nap": lambda p, ctx: ctx.wait_cancelled(2.5) or "rested"}, lease_seconds=0.8)
        t = self.c.submit("nap", queue=self.q)
        done = wait_status(self.c, t.id, "SUCCEEDED", timeout=15)
        self.assertEqual((done.result, done.attempt, done.crashes), ("rested", 1, 0))

    def test_result_over_the_body_cap_fails_the_task_saying_why(self) -> None:
        start_worker(self, self.q, {"huge": lambda p, ctx: "x" * (3 << 20), "echo": lambda p, ctx: p},
                     concurrency=4)
        small = [self.c.submit("echo", i, queue=self.q).id for i in range(3)]
        big = self.c.submit("huge", queue=self.q).id
        dead = wait_status(self.c, big, "DEAD", timeout=20)
        self.assertIn("the result was refused", dead.last_error)
        for i, tid in enumerate(small):
            self.assertEqual(wait_status(self.c, tid, "SUCCEEDED").result, i)

    def test_unknown_result_type_fails_permanently(self) -> None:
        start_worker(self, self.q, {"bad": lambda p, ctx: object()})
        t = self.c.submit("bad", queue=self.q)
        self.assertIn("not JSON-encodable", wait_status(self.c, t.id, "DEAD").last_error)


class DurableTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.addCleanup(self.c.close)
        self.q = fresh_queue()

    def test_recorded_step_is_skipped_on_retry(self) -> None:
        calls = []

        def order(p, ctx):
            ran = []
            one = ctx.step("one", lambda: ran.append("one") or {"n": 1})
            if ctx.attempt == 1:
                raise dtq.RetryAfter(0.1, "between the steps")
            two = ctx.step("two", lambda: ran.append("two") or {"n": 2})
            calls.append(ran)
            return {"one": one, "two": two, "ran": ran}
        start_worker(self, self.q, {"order": order})
        t = self.c.submit("order", queue=self.q)
        done = wait_status(self.c, t.id, "SUCCEEDED", timeout=20)
        self.assertEqual(done.result, {"one": {"n": 1}, "two": {"n": 2}, "ran": ["two"]})
        self.assertEqual(done.attempt, 2)
        self.assertEqual([s.name for s in done.steps], ["one", "two"])

    def test_durable_sleep_suspends_and_resumes(self) -> None:
        runs = []

        def napper(p, ctx):
            runs.append(ctx.attempt)
            try:
                ctx.sleep("nap", 1)
            except Exception:  # noqa: BLE001 — must not catch the suspension
                raise AssertionError("except Exception caught the suspension")
            return {"napped": True, "attempt": ctx.attempt}
        rw = start_worker(self, self.q, {"napper": napper, "echo": lambda p, ctx: p}, concurrency=1)
        t = self.c.submit("napper", queue=self.q)
        sus = eventually("suspended", lambda: (lambda x: x if x.suspended else None)(self.c.get(t.id)))
        self.assertEqual((sus.status, sus.suspended.for_, sus.suspended.name), ("SCHEDULED", "sleep", "nap"))
        e = self.c.submit("echo", 7, queue=self.q)  # the one slot is free meanwhile
        self.assertEqual(wait_status(self.c, e.id, "SUCCEEDED", timeout=5).result, 7)
        done = wait_status(self.c, t.id, "SUCCEEDED", timeout=15)
        self.assertEqual(done.result, {"napped": True, "attempt": 1})
        self.assertEqual(runs, [1, 1])
        self.assertEqual([h.outcome for h in done.history], ["suspended", "succeeded"])
        self.assertFalse(any(ev["event"] in ("done", "failed") and ev["task"] == t.id and ev.get("status") != "SUCCEEDED"
                             for ev in rw.events))

    def test_wait_for_a_signal_and_its_timeout(self) -> None:
        def waiter(p, ctx):
            try:
                return {"signal": ctx.wait_for("go", p["timeout"])}
            except dtq.WaitTimedOut:
                return {"timed_out": True}
        start_worker(self, self.q, {"waiter": waiter})
        t = self.c.submit("waiter", {"timeout": 60}, queue=self.q)
        eventually("waiting", lambda: (lambda x: x.suspended and x.suspended.for_ == "signal")(self.c.get(t.id)))
        self.c.signal(t.id, "go", {"by": "ann"})
        self.assertEqual(wait_status(self.c, t.id, "SUCCEEDED").result, {"signal": {"by": "ann"}})
        t2 = self.c.submit("waiter", {"timeout": 0.5}, queue=self.q)
        self.assertEqual(wait_status(self.c, t2.id, "SUCCEEDED").result, {"timed_out": True})

    def test_child(self) -> None:
        def parent(p, ctx):
            return {"child": ctx.child("kid", "kid", 20, queue=self.q)}
        start_worker(self, self.q, {"parent": parent, "kid": lambda p, ctx: p + 1})
        t = self.c.submit("parent", queue=self.q)
        self.assertEqual(wait_status(self.c, t.id, "SUCCEEDED", timeout=30).result, {"child": 21})


class LifecycleTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.addCleanup(self.c.close)
        self.q = fresh_queue()

    def test_graceful_stop(self) -> None:
        started = threading.Event()

        def slow(p, ctx):
            started.set()
            time.sleep(1.0)
            return "finished"
        rw = start_worker(self, self.q, {"slow": slow}, grace_seconds=10, poll_seconds=20)
        t = self.c.submit("slow", queue=self.q)
        self.assertTrue(started.wait(10))
        t0 = time.monotonic()
        rw.worker.stop()
        time.sleep(0.5)  # the long poll in flight is aborted ABORT_POLL_AFTER (0.1 s) after the stop
        after = self.c.submit("slow", queue=self.q)
        rw.thread.join(15)
        self.assertFalse(rw.thread.is_alive(), "run() did not return")
        self.assertLess(time.monotonic() - t0, 5)
        got = self.c.get(t.id)
        self.assertEqual((got.status, got.result, got.crashes), ("SUCCEEDED", "finished", 0))
        self.assertEqual(self.c.get(after.id).status, "QUEUED")
        self.assertEqual(rw.events[-1]["event"], "stopped")

    def test_grace_ends_and_the_task_is_given_back(self) -> None:
        def forever(p, ctx):
            ctx.wait_cancelled(60)
            return "never reported"
        rw = start_worker(self, self.q, {"forever": forever}, grace_seconds=0.3, lease_seconds=1)
        t = self.c.submit("forever", queue=self.q)
        wait_status(self.c, t.id, "RUNNING")
        rw.stop(timeout=10)
        self.assertTrue(any(e["event"] == "abandoned" and e["task"] == t.id for e in rw.events))
        self.assertEqual(self.c.get(t.id).status, "RUNNING")  # held until its lease runs out, then taken over

    def test_batch_leasing_and_the_workers_list(self) -> None:
        ids = [i.task.id for i in self.c.submit_many([{"type": "echo", "payload": i, "queue": self.q}
                                                      for i in range(200)])]
        leases_before = request_count("POST /api/v1/leases")
        gate = threading.Event()

        def echo(p, ctx):
            gate.wait(10)
            return p
        name = "batch-" + self.q
        rw = start_worker(self, self.q, {"echo": echo}, concurrency=20, name=name)
        found = eventually("the worker in GET /api/v1/workers", lambda: [
            w for w in self.c.workers() if w.id == "http:" + name])
        w = found[0]
        self.assertEqual((w.kind, w.library, w.concurrency, w.queues), ("http", dtq.LIBRARY, 20, [self.q]))
        gate.set()
        for i, tid in enumerate(ids):
            self.assertEqual(wait_status(self.c, tid, "SUCCEEDED", timeout=30).result, i)
        leases = request_count("POST /api/v1/leases") - leases_before
        self.assertLess(leases, 200 / 4, "%d lease calls for 200 tasks" % leases)
        rw.stop()
        done = [e for e in rw.events if e["event"] == "done"]
        self.assertEqual(len(done), 200)


class OutcomeBatchTest(unittest.TestCase):
    def test_outcomes_go_in_batches(self) -> None:
        if request_count_routes_has("POST /api/v1/leases/outcomes") is False:
            self.fail("the server has no POST /api/v1/leases/outcomes route")
        c = client()
        self.addCleanup(c.close)
        q = fresh_queue()
        c.submit_many([{"type": "echo", "payload": i, "queue": q} for i in range(300)])
        before = request_count("POST /api/v1/leases/outcomes")
        rw = start_worker(self, q, {"echo": lambda p, ctx: p}, concurrency=50)
        eventually("300 succeeded", lambda: c.queues.get(q).succeeded_total == 300, timeout=30)
        calls = request_count("POST /api/v1/leases/outcomes") - before
        self.assertGreater(calls, 0)
        self.assertLess(calls, 300 / 4, "%d outcome reports for 300 tasks" % calls)
        rw.stop()


class UnreachableServerTest(unittest.TestCase):
    def test_outcome_is_retried_until_the_server_is_back(self) -> None:
        c = client()
        self.addCleanup(c.close)
        q = fresh_queue()
        proxy = Proxy(URL)
        self.addCleanup(proxy.down)
        gate = threading.Event()
        started = threading.Event()

        def held(p, ctx):
            started.set()
            gate.wait(10)
            return "made it"
        rw = start_worker(self, q, {"held": held}, url=proxy.url, lease_seconds=6, poll_seconds=1)
        t = c.submit("held", queue=q)
        self.assertTrue(started.wait(10))
        proxy.down()
        gate.set()  # the outcome is ready while the server cannot be reached
        eventually("a failed report", lambda: any(e["event"] == "error" and e.get("on") in ("outcomes", "complete")
                                                  for e in rw.events))
        self.assertEqual(c.get(t.id).status, "RUNNING")
        time.sleep(0.5)
        proxy.up()
        done = wait_status(c, t.id, "SUCCEEDED", timeout=10)
        self.assertEqual((done.result, done.attempt, done.crashes), ("made it", 1, 0))


class LeaseByLeaseFallbackTest(unittest.TestCase):
    def test_reports_lease_by_lease_without_the_batch_route(self) -> None:
        """A server without POST /api/v1/leases/outcomes (older than the
        library): outcomes go through …/complete and …/fail."""
        c = client()
        self.addCleanup(c.close)
        q = fresh_queue()
        ok = [c.submit("echo", i, queue=q).id for i in range(20)]
        bad = c.submit("doomed", queue=q).id
        completes = request_count("POST /api/v1/leases/{lease}/complete")
        fails = request_count("POST /api/v1/leases/{lease}/fail")
        events: list = []
        w = dtq.Worker(queues=[q], concurrency=5, poll_seconds=1, on_event=lambda e, **f: events.append(e))
        w.register("echo", lambda p, ctx: p)
        w.register("doomed", lambda p, ctx: (_ for _ in ()).throw(dtq.Permanent("no")))
        w._batch_route = False
        th = threading.Thread(target=w.run, daemon=True)
        th.start()
        self.addCleanup(lambda: (w.stop(), th.join(10)))
        for i, tid in enumerate(ok):
            self.assertEqual(wait_status(c, tid, "SUCCEEDED").result, i)
        self.assertEqual(wait_status(c, bad, "DEAD").last_error, "no")
        self.assertEqual(request_count("POST /api/v1/leases/{lease}/complete") - completes, 20)
        self.assertEqual(request_count("POST /api/v1/leases/{lease}/fail") - fails, 1)


def request_count_routes_has(route: str) -> bool:
    """Whether the server serves route (an OPTIONS-free probe: the OpenAPI document lists it)."""
    c = client()
    try:
        doc = c.request("GET", "/api/v1/openapi.json")
    finally:
        c.close()
    path = route.split(" ", 1)[1]
    return path in doc.get("paths", {})


if __name__ == "__main__":
    unittest.main()
