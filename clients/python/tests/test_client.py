"""dtq.Client against a real `dtq serve`: submissions and their options,
reads, cancel, signals, workflows, schedules, dead letters, queues, and every
typed error the server answers."""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
import time
import unittest

from _support import REPO_ROOT, URL, client, eventually, fresh_queue, start_worker, wait_status

import dtq
from dtq import errors as dtq_errors


def lease_one(c: dtq.Client, queue: str, lease_seconds: float = 30) -> dict:
    """Leases one task of queue by hand (as a worker would)."""
    ans = c.request("POST", "/api/v1/leases", {"worker": "test-hand", "queues": [queue], "max": 1,
                                               "wait_seconds": 5, "lease_seconds": lease_seconds})
    assert ans["leases"], "no task to lease in %s" % queue
    return ans["leases"][0]


class SubmitTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.addCleanup(self.c.close)
        self.q = fresh_queue()

    def test_submit_with_every_option(self) -> None:
        t = self.c.submit("resize", {"image": "cat.png"}, queue=self.q, priority=7, max_attempts=3, timeout=12.5,
                          group="tenant-a", limit_key="cust-1")
        self.assertIsInstance(t, dtq.Task)
        self.assertTrue(t.id.startswith(self.q + "-"))
        self.assertEqual((t.task_type, t.payload, t.priority, t.max_attempts, t.timeout_seconds),
                         ("resize", {"image": "cat.png"}, 7, 3, 12.5))
        self.assertEqual((t.group, t.limit_key, t.queue), ("tenant-a", "cust-1", self.q))
        got = self.c.get(t.id)
        self.assertEqual(got.id, t.id)
        self.assertIn(got.status, ("QUEUED",))
        self.assertEqual(got.raw["priority"], 7)

    def test_delay_and_run_at_schedule_the_task(self) -> None:
        t = self.c.submit("later", queue=self.q, delay=3600)
        self.assertEqual(t.status, "SCHEDULED")
        at = dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=2)
        t2 = self.c.submit("later", queue=self.q, run_at=at)
        self.assertEqual(t2.status, "SCHEDULED")
        due = dt.datetime.fromisoformat(t2.scheduled_at.replace("Z", "+00:00"))
        self.assertLess(abs((due - at).total_seconds()), 5)
        with self.assertRaisesRegex(ValueError, "delay and run_at"):
            self.c.submit("later", queue=self.q, delay=1, run_at=at)

    def test_unique_answers_the_holder(self) -> None:
        a = self.c.submit("u", {"k": 1}, queue=self.q, unique="order-1", unique_period=60)
        b = self.c.submit("u", {"k": 2}, queue=self.q, unique="order-1", unique_period=60)
        self.assertFalse(a.duplicate)
        self.assertTrue(b.duplicate)
        self.assertEqual(a.id, b.id)
        c1 = self.c.submit("u", {"same": True}, queue=self.q, unique=True)
        c2 = self.c.submit("u", {"same": True}, queue=self.q, unique=True, unique_states=["QUEUED"])
        self.assertEqual(c1.id, c2.id)

    def test_order_key_runs_one_at_a_time(self) -> None:
        a = self.c.submit("o", 1, queue=self.q, order_key="acct-1")
        b = self.c.submit("o", 2, queue=self.q, order_key="acct-1")
        other = self.c.submit("o", 3, queue=self.q, order_key="acct-2")
        self.assertEqual((a.order_key, a.order_waiting, a.status), ("acct-1", False, "QUEUED"))
        self.assertEqual((b.order_key, b.order_waiting, b.status), ("acct-1", True, "QUEUED"))
        self.assertFalse(other.order_waiting)  # keys are independent
        self.assertTrue(self.c.get(b.id).order_waiting)
        st = self.c.queues.get(self.q)
        self.assertEqual((st.order_waiting, st.queued), (1, 3))
        # A worker runs the key's tasks in submission order, one at a time.
        lock = threading.Lock()
        ran: list = []
        running = [0, 0]  # acct-1 tasks running now, the most at once

        def handler(payload: int, ctx: dtq.Context) -> int:
            if payload == 3:
                return payload
            with lock:
                ran.append(payload)
                running[0] += 1
                running[1] = max(running)
            time.sleep(0.05)
            with lock:
                running[0] -= 1
            return payload
        c = self.c.submit("o", 4, queue=self.q, order_key="acct-1")
        start_worker(self, self.q, {"o": handler}, concurrency=4)
        for t in (a, b, c, other):
            wait_status(self.c, t.id, "SUCCEEDED")
        self.assertEqual((ran, running[1]), ([1, 2, 4], 1))
        self.assertFalse(self.c.get(c.id).order_waiting)
        self.assertEqual(self.c.queues.get(self.q).order_waiting, 0)

    def test_order_key_refusals(self) -> None:
        with self.assertRaisesRegex(TypeError, "^order_key: must be a string"):
            self.c.submit("o", queue=self.q, order_key=7)  # type: ignore[arg-type]
        with self.assertRaises(dtq.Invalid) as cm:
            self.c.submit("o", queue=self.q, order_key="")
        self.assertEqual(cm.exception.field, "order_key")
        with self.assertRaises(dtq.Invalid) as cm:
            self.c.submit("o", queue=self.q, order_key="k", unique=True)
        self.assertEqual(cm.exception.field, "order_key")

    def test_debounce_joins_the_pending_task(self) -> None:
        a = self.c.submit("d", {"v": 1}, queue=self.q, debounce=dtq.Debounce("doc-1", period=60, max_wait=600))
        self.assertEqual((a.status, a.debounced, a.duplicate), ("SCHEDULED", False, False))
        b = self.c.submit("d", {"v": 2}, queue=self.q, debounce={"key": "doc-1", "period": 60})
        self.assertEqual((b.id, b.debounced, b.payload), (a.id, True, {"v": 2}))  # the last payload wins
        kept = self.c.submit("d", {"v": 3}, queue=self.q, debounce=dtq.Debounce("doc-1", 60, keep_first=True))
        self.assertEqual((kept.id, kept.debounced, kept.payload), (a.id, True, {"v": 2}))
        self.assertEqual(self.c.get(a.id).payload, {"v": 2})
        self.assertFalse(self.c.get(a.id).debounced)  # only a joining submission's answer says it
        other = self.c.submit("d", queue=self.q, debounce=dtq.Debounce("doc-2", 60))
        self.assertNotEqual(other.id, a.id)
        self.assertFalse(other.debounced)
        # In a batch: 201 for the item that creates the task, 200 for the one that joins it (the server
        # submits a batch's debounced items side by side: which one comes first is not the items' order).
        items = self.c.submit_many([{"type": "d", "queue": self.q, "debounce": {"key": "doc-3", "period": 60}},
                                    {"type": "d", "queue": self.q, "debounce": dtq.Debounce("doc-3", 60)}])
        self.assertEqual(sorted((i.status, i.task.debounced) for i in items), [(200, True), (201, False)])
        self.assertEqual(items[0].task.id, items[1].task.id)
        # A short period: the task comes due and runs; the next submission creates a new one.
        short = self.c.submit("d", queue=self.q, debounce=dtq.Debounce("doc-4", 0.2))
        start_worker(self, self.q, {"d": lambda payload, ctx: payload})
        wait_status(self.c, short.id, "SUCCEEDED")
        again = self.c.submit("d", queue=self.q, debounce=dtq.Debounce("doc-4", 60))
        self.assertNotEqual(again.id, short.id)
        self.assertFalse(again.debounced)

    def test_debounce_refusals(self) -> None:
        for bad, pattern in ((dtq.Debounce(7, 1), "^debounce.key: must be a string"),  # type: ignore[arg-type]
                             (dtq.Debounce("k", "1s"), "^debounce.period: must be a number"),  # type: ignore
                             (dtq.Debounce("k", 1, max_wait=True), "^debounce.max_wait: must be a number"),
                             (dtq.Debounce("k", 1, keep_first=1), "^debounce.keep_first: must be a bool"),  # type: ignore
                             ({"key": "k"}, "^debounce: needs key and period"),
                             ({"key": "k", "period_seconds": 1}, "^debounce: unknown key"),
                             ("k", "^debounce: must be a dtq.Debounce")):
            with self.assertRaisesRegex(TypeError, pattern):
                self.c.submit("d", queue=self.q, debounce=bad)  # type: ignore[arg-type]
        with self.assertRaisesRegex(TypeError, r"^tasks\[0\]\.debounce.period: must be a number"):
            self.c.submit_many([{"type": "d", "debounce": {"key": "k", "period": None}}])
        # The server's rules, with its words.
        for opts, field in (({"delay": 5}, "debounce"), ({"unique": True}, "debounce"),
                            ({"order_key": "k"}, "debounce"), ({"idempotency_key": "i-" + self.q}, "debounce")):
            with self.assertRaises(dtq.Invalid) as cm:
                self.c.submit("d", queue=self.q, debounce=dtq.Debounce("k", 1), **opts)
            self.assertEqual(cm.exception.field, field, opts)
        with self.assertRaises(dtq.Invalid) as cm:
            self.c.submit("d", queue=self.q, debounce=dtq.Debounce("k", 0))
        self.assertEqual(cm.exception.field, "debounce.period_seconds")
        with self.assertRaises(dtq.Invalid) as cm:
            self.c.submit("d", queue=self.q, debounce=dtq.Debounce("k", 10, max_wait=5))
        self.assertEqual(cm.exception.field, "debounce.max_wait_seconds")

    def test_idempotency_key(self) -> None:
        key = "idem-" + self.q
        a = self.c.submit("i", 1, queue=self.q, idempotency_key=key)
        with self.assertRaises(dtq.InProgress) as cm:  # the same request while it is queued
            self.c.submit("i", 1, queue=self.q, idempotency_key=key)
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.task_id), (409, "in_progress", a.id))
        with self.assertRaises(dtq.IdempotencyKeyReused) as cm2:
            self.c.submit("i", 2, queue=self.q, idempotency_key=key)
        self.assertEqual((cm2.exception.status, cm2.exception.task_id), (422, a.id))

    def test_submit_many(self) -> None:
        items = self.c.submit_many([
            {"type": "a", "payload": 1, "queue": self.q},
            {"task_type": "b", "queue": self.q, "priority": 12},
            {"type": "c", "queue": self.q, "delay": 60},
        ])
        self.assertEqual([i.status for i in items], [201, 400, 201])
        self.assertTrue(items[0].ok and items[2].ok)
        self.assertEqual(items[0].task.task_type, "a")
        self.assertEqual(items[2].task.status, "SCHEDULED")
        self.assertIsInstance(items[1].error, dtq.Invalid)
        self.assertEqual(items[1].error.field, "priority")
        with self.assertRaisesRegex(TypeError, r"tasks\[0\]: unknown argument\(s\) colour"):
            self.c.submit_many([{"type": "a", "colour": "red"}])

    def test_list_filters_and_pages(self) -> None:
        for i in range(5):
            self.c.submit("listed", i, queue=self.q)
        self.c.submit("other", queue=self.q)
        self.c.submit("listed", queue=self.q, delay=600)
        page = self.c.list(self.q, type="listed", status="QUEUED", limit=2)
        self.assertEqual(len(page.items), 2)
        self.assertTrue(page.next_cursor)
        every = list(self.c.list_all(self.q, type="listed", status="QUEUED", limit=2))
        self.assertEqual(sorted(t.payload for t in every), [0, 1, 2, 3, 4])
        self.assertEqual([t.status for t in self.c.list(self.q, status="SCHEDULED").items], ["SCHEDULED"])
        self.assertEqual(len(self.c.list(self.q, id_prefix=every[0].id).items), 1)
        past = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)
        self.assertEqual(len(self.c.list(self.q, created_before=past).items), 0)

    def test_cancel(self) -> None:
        t = self.c.submit("c", queue=self.q, delay=600)
        self.assertEqual(self.c.cancel(t.id).status, "CANCELLED")
        self.assertEqual(self.c.cancel(t.id).status, "CANCELLED")  # again: 200
        done = self.c.submit("c", queue=self.q)
        lease = lease_one(self.c, self.q)
        self.c.request("POST", "/api/v1/leases/%s/complete" % lease["lease"], {"result": "ok"})
        self.assertEqual(self.c.get(done.id).result, "ok")
        with self.assertRaises(dtq.NotCancellable) as cm:
            self.c.cancel(done.id)
        self.assertEqual(cm.exception.status, 409)

    def test_signal(self) -> None:
        t = self.c.submit("s", queue=self.q, delay=600)
        ans = self.c.signal(t.id, "go", {"by": "ann"})
        self.assertEqual((ans.task_id, ans.name, ans.delivered), (t.id, "go", True))
        with self.assertRaises(dtq.SignalDelivered):
            self.c.signal(t.id, "go", 2)
        self.c.cancel(t.id)
        with self.assertRaises(dtq.TaskFinished):
            self.c.signal(t.id, "other")


class ErrorsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.addCleanup(self.c.close)
        self.q = fresh_queue()

    def test_not_found(self) -> None:
        with self.assertRaises(dtq.NotFound) as cm:
            self.c.get(self.q + "-01M8M67VYQCTATQE2HSYY9GCZX")
        e = cm.exception
        self.assertEqual((e.status, e.code), (404, "not_found"))
        self.assertIn("no such task", e.message)
        self.assertIsInstance(e, dtq.DtqError)

    def test_invalid_names_the_field(self) -> None:
        with self.assertRaises(dtq.Invalid) as cm:
            self.c.submit("t", queue=self.q, priority=12)
        self.assertEqual((cm.exception.status, cm.exception.code, cm.exception.field), (400, "invalid_field", "priority"))
        with self.assertRaises(dtq.Invalid) as cm:
            self.c.submit("t", queue="bad name")
        self.assertEqual(cm.exception.field, "queue")
        with self.assertRaises(dtq.Invalid) as cm:
            self.c.submit("t", queue=self.q, timeout=10 ** 9)
        self.assertEqual(cm.exception.field, "timeout_seconds")
        self.assertIsInstance(cm.exception, dtq.BadRequest)

    def test_library_checks_types_naming_the_field(self) -> None:
        with self.assertRaisesRegex(TypeError, "^priority: must be an int"):
            self.c.submit("t", queue=self.q, priority="7")  # type: ignore[arg-type]
        with self.assertRaisesRegex(TypeError, "^delay: must be a number"):
            self.c.submit("t", queue=self.q, delay=True)  # type: ignore[arg-type]
        with self.assertRaisesRegex(ValueError, "^task_type: must be a non-empty string"):
            self.c.submit("", queue=self.q)
        with self.assertRaisesRegex(ValueError, "^url: must be http"):
            dtq.Client(url="ftp://x")
        with self.assertRaisesRegex(ValueError, "^task_id: must be a non-empty string"):
            self.c.get("")

    def test_bad_request(self) -> None:
        status, ans = self.c._t.request("POST", "/api/v1/tasks", raw_body=b'{"task_type": ')
        self.assertEqual(status, 400)
        self.assertIsInstance(ans, dtq.BadRequest)
        self.assertNotIsInstance(ans, dtq.Invalid)
        self.assertEqual(ans.code, "bad_request")

    def test_method_not_allowed_and_forbidden_origin(self) -> None:
        with self.assertRaises(dtq.MethodNotAllowed) as cm:
            self.c.request("DELETE", "/api/v1/tasks")
        self.assertEqual((cm.exception.status, cm.exception.code), (405, "method_not_allowed"))
        with self.assertRaises(dtq.ForbiddenOrigin) as cm2:
            self.c._t.call("POST", "/api/v1/tasks", {"task_type": "t", "queue": self.q},
                           headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
        self.assertEqual((cm2.exception.status, cm2.exception.code), (403, "forbidden_origin"))

    def test_unauthorized(self) -> None:
        if not os.environ.get("DTQ_API_KEY"):
            self.fail("DTQ_API_KEY is not set: the test server must require an API key")
        bad = dtq.Client(api_key="not-the-key")
        self.addCleanup(bad.close)
        with self.assertRaises(dtq.Unauthorized) as cm:
            bad.submit("t", queue=self.q)
        self.assertEqual((cm.exception.status, cm.exception.code), (401, "unauthorized"))

    def test_queue_full_with_retry_after(self) -> None:
        depth = int(os.environ.get("DTQ_TEST_MAX_DEPTH", "0"))
        if depth <= 0:
            self.fail("DTQ_TEST_MAX_DEPTH is not set: the test server must run with --max-depth")
        items = self.c.submit_many([{"type": "fill", "queue": self.q}] * depth)
        self.assertTrue(all(i.ok for i in items))
        with self.assertRaises(dtq.QueueFull) as cm:
            self.c.submit("fill", queue=self.q)
        e = cm.exception
        self.assertEqual((e.status, e.code), (429, "queue_full"))
        self.assertIsInstance(e, dtq.RateLimited)
        self.assertIsNotNone(e.retry_after)
        self.c.dead_letters.purge(self.q)
        self.c.queues.delete(self.q, force=True)

    def test_too_large(self) -> None:
        with self.assertRaises(dtq.TooLarge) as cm:
            self.c.submit("big", "x" * (1 << 20), queue=self.q)
        self.assertEqual(cm.exception.status, 413)

    def test_lease_lost_and_conflicts(self) -> None:
        self.c.submit("l", queue=self.q)
        lease = lease_one(self.c, self.q)
        self.c.request("POST", "/api/v1/leases/%s/complete" % lease["lease"], {"result": 1})
        with self.assertRaises(dtq.LeaseLost) as cm:
            self.c.request("POST", "/api/v1/leases/%s/extend" % lease["lease"])
        self.assertEqual((cm.exception.status, cm.exception.code), (409, "lease_lost"))
        self.assertIsInstance(cm.exception, dtq.Conflict)
        with self.assertRaises(dtq.NotDead):
            self.c.dead_letters.requeue(lease["task"]["id"])
        self.c.submit("n", queue=self.q)
        with self.assertRaises(dtq.QueueNotEmpty):
            self.c.queues.delete(self.q)

    def test_connection_failed(self) -> None:
        dead = dtq.Client(url="http://127.0.0.1:1", timeout=2)
        with self.assertRaises(dtq.ConnectionFailed) as cm:
            dead.get("x")
        self.assertEqual(cm.exception.status, 0)

    def test_every_documented_code_has_its_class(self) -> None:
        with open(os.path.join(REPO_ROOT, "api", "openapi.json")) as f:
            codes = json.load(f)["components"]["schemas"]["ErrorCode"]["enum"]
        for code in codes:
            e = dtq_errors.error_from_answer(400, {"error": {"code": code, "message": "m"}})
            self.assertIsNot(type(e), dtq.DtqError, "code %s maps to no class of its own" % code)
            self.assertEqual((e.code, e.message), (code, "m"))
        self.assertIsInstance(dtq_errors.error_from_answer(503, {"error": {"code": "out_of_memory", "message": ""}}),
                              dtq.Unavailable)
        self.assertIsInstance(dtq_errors.error_from_answer(410, {"error": {"code": "expired", "message": ""}}),
                              dtq.Expired)
        self.assertIsInstance(dtq_errors.error_from_answer(502, None), dtq.InternalError)
        self.assertEqual(dtq.Invalid("the Idempotency-Key header is too long", code="invalid_field").field,
                         "Idempotency-Key")


class WorkflowsTest(unittest.TestCase):
    def test_chain_runs_and_cancel(self) -> None:
        c = client()
        self.addCleanup(c.close)
        q = fresh_queue()
        start_worker(self, q, {"add": lambda p, ctx: (ctx.task.previous or 0) + p})
        wf = c.workflows.submit(dtq.chain(dtq.node("add", 1), dtq.node("add", 10, priority=6)), queue=q)
        self.assertIsInstance(wf, dtq.Workflow)
        done = eventually("workflow succeeded", lambda: (lambda w: w if w.status == "SUCCEEDED" else None)(
            c.workflows.get(wf.id)))
        self.assertEqual(done.result, 11)
        self.assertEqual(done.root.kind, "chain")
        self.assertEqual([n.status for n in done.root.nodes], ["SUCCEEDED", "SUCCEEDED"])
        self.assertEqual(done.progress.succeeded, 2)
        slow = c.workflows.submit(dtq.parallel(dtq.node("nobody"), dtq.node("nobody"),
                                               on_success=dtq.node("nobody")), queue=q)
        got = c.workflows.cancel(slow.id)
        self.assertTrue(got.cancel_requested)
        with self.assertRaises(dtq.NotFound):
            c.workflows.get(q + "-01M8M67VYQCTATQE2HSYY9GCZX")


class SchedulesTest(unittest.TestCase):
    def test_lifecycle(self) -> None:
        c = client()
        self.addCleanup(c.close)
        q = fresh_queue()
        s = c.schedules.put(q, "nightly", cron="0 3 * * *", task_type="report", payload={"k": 1},
                            time_zone="Europe/Paris", priority=6, max_attempts=2, timeout=60, missed="catch_up",
                            catch_up_max=5)
        self.assertIsInstance(s, dtq.Schedule)
        self.assertEqual((s.cron, s.time_zone, s.task_type, s.payload, s.priority, s.missed),
                         ("0 3 * * *", "Europe/Paris", "report", {"k": 1}, 6, "catch_up"))
        self.assertTrue(s.next_run)
        self.assertEqual(c.schedules.get(q, "nightly").catch_up_max, 5)
        self.assertEqual([x.name for x in c.schedules.list(q)], ["nightly"])
        self.assertTrue(c.schedules.pause(q, "nightly").paused)
        self.assertFalse(c.schedules.resume(q, "nightly").paused)
        c.schedules.delete(q, "nightly")
        with self.assertRaises(dtq.NotFound):
            c.schedules.get(q, "nightly")
        with self.assertRaises(dtq.Invalid):
            c.schedules.put(q, "bad", cron="not a cron", task_type="x")


class DeadLettersAndQueuesTest(unittest.TestCase):
    def test_dead_letters(self) -> None:
        c = client()
        self.addCleanup(c.close)
        q = fresh_queue()

        def kill(n: int) -> list:
            ids = []
            for i in range(n):
                ids.append(c.submit("doomed", i, queue=q).id)
                lease = lease_one(c, q)
                c.request("POST", "/api/v1/leases/%s/fail" % lease["lease"],
                          {"error": "broken %d" % i, "class": "permanent"})
            return ids
        ids = kill(3)
        page = c.dead_letters.list(q)
        self.assertEqual(sorted(d.task.id for d in page.items), sorted(ids))
        self.assertTrue(all(isinstance(d, dtq.DeadLetter) and "broken" in d.reason for d in page.items))
        self.assertEqual(c.dead_letters.requeue(ids[0]).status, "QUEUED")
        c.dead_letters.discard(ids[1])  # out of the stream; the task stays DEAD
        self.assertNotIn(ids[1], [d.task.id for d in c.dead_letters.list(q).items])
        with self.assertRaises(dtq.NotDead):
            c.dead_letters.requeue(ids[1])
        dry = c.dead_letters.redrive(q, task_type="doomed", error_contains="BROKEN 2", dry_run=True)
        self.assertEqual((dry.matched, dry.requeued, dry.dry_run), (1, 0, True))
        self.assertEqual(c.dead_letters.redrive(q, error_contains="broken 2").requeued, 1)
        self.assertEqual(c.get(ids[2]).status, "QUEUED")
        c.cancel(ids[0])
        c.cancel(ids[2])
        kill(2)
        self.assertEqual(c.dead_letters.requeue_all(q), 2)
        for _ in range(2):
            lease = lease_one(c, q)
            c.request("POST", "/api/v1/leases/%s/fail" % lease["lease"], {"error": "again", "class": "permanent"})
        self.assertEqual(c.dead_letters.purge(q), 2)
        self.assertEqual(c.dead_letters.list(q).items, [])

    def test_queues(self) -> None:
        c = client()
        self.addCleanup(c.close)
        q = fresh_queue()
        c.submit("x", queue=q)
        self.assertIn(q, [s.name for s in c.queues.list()])
        st = c.queues.get(q)
        self.assertIsInstance(st, dtq.QueueStats)
        self.assertEqual((st.queued, st.paused), (1, False))
        self.assertTrue(c.queues.pause(q).paused)
        self.assertFalse(c.queues.resume(q).paused)
        with self.assertRaises(dtq.NotFound):
            c.queues.get(fresh_queue("nothere"))


if __name__ == "__main__":
    unittest.main()
