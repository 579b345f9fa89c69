"""dtq.MessageQueue against a real `dtq serve`: put, receive, and each way
of settling a message."""

from __future__ import annotations

import time
import unittest

from _support import eventually, fresh_queue

import dtq


class MessageQueueTest(unittest.TestCase):
    def setUp(self) -> None:
        self.mq = dtq.MessageQueue(fresh_queue("mq"), worker="py-test")
        self.addCleanup(self.mq.close)

    def test_put_receive_ack(self) -> None:
        self.assertTrue(self.mq.put("jobs", "héllo", key="k1"))
        self.assertFalse(self.mq.put("jobs", "again", key="k1"))  # the key is live
        self.assertTrue(self.mq.put("jobs", b"\x00\xffbin"))
        got = self.mq.receive("jobs", max=10, wait=2)
        self.assertEqual([m.data for m in got], ["héllo".encode(), b"\x00\xffbin"])
        m = got[0]
        self.assertEqual((m.key, m.topic, m.deliveries, m.text), ("k1", "jobs", 1, "héllo"))
        self.assertTrue(m.id)
        self.assertEqual(self.mq.topic("jobs").in_flight, 2)
        self.assertTrue(m.extend())
        for x in got:
            x.ack()
        stats = self.mq.topic("jobs")
        self.assertIsInstance(stats, dtq.TopicStats)
        self.assertEqual((stats.queued, stats.in_flight, stats.delayed), (0, 0, 0))
        with self.assertRaises(dtq.LeaseLost):
            m.ack()  # settled already
        self.assertTrue(self.mq.put("jobs", "free again", key="k1"))

    def test_nak_redelivers(self) -> None:
        self.mq.put("jobs", "retry me")
        m = self.mq.receive(["jobs"], wait=2)[0]
        t0 = time.monotonic()
        m.nak(delay=1.5)
        self.assertEqual(self.mq.receive("jobs"), [])  # not before its delay
        again = eventually("redelivered", lambda: self.mq.receive("jobs", wait=1))
        self.assertGreaterEqual(time.monotonic() - t0, 1.4)
        self.assertEqual((again[0].data, again[0].deliveries), (b"retry me", 2))
        again[0].nak()
        now = self.mq.receive("jobs", wait=2)
        self.assertEqual(now[0].deliveries, 3)
        now[0].ack()

    def test_term_dead_letters(self) -> None:
        self.mq.put("jobs", "poison", key="p1")
        m = self.mq.receive("jobs", wait=2)[0]
        m.term("cannot parse")
        dead = self.mq.dead()
        self.assertEqual(len(dead), 1)
        d = dead[0]
        self.assertIsInstance(d, dtq.DeadMessage)
        self.assertEqual((d.data, d.key, d.reason, d.topic, d.message_id), (b"poison", "p1", "cannot parse", "jobs", m.id))

    def test_release_moves_to_another_topic(self) -> None:
        self.mq.put("inbox", "move me")
        m = self.mq.receive("inbox", wait=2)[0]
        m.release("archive")
        self.assertEqual(self.mq.receive("inbox"), [])
        moved = self.mq.receive(["archive"], wait=2)
        self.assertEqual(moved[0].data, b"move me")
        moved[0].ack()

    def test_priority_order_and_delay(self) -> None:
        self.mq.put("low", "l")
        self.mq.put("high", "h")
        self.mq.put("high", "later", delay=1.5)
        got = self.mq.receive(["high", "low"], max=10)
        self.assertEqual([m.data for m in got], [b"h", b"l"])
        self.assertEqual(self.mq.topic("high").delayed, 1)
        self.assertEqual([m.data for m in self.mq.receive("high", wait=5)], [b"later"])

    def test_topic_full_and_bad_input(self) -> None:
        self.mq.put("small", "one", max_size=1)
        with self.assertRaises(dtq.TopicFull) as cm:
            self.mq.put("small", "two", max_size=1)
        self.assertEqual((cm.exception.status, cm.exception.code), (429, "topic_full"))
        self.assertIsInstance(cm.exception, dtq.RateLimited)
        with self.assertRaisesRegex(TypeError, "^data: must be bytes or str"):
            self.mq.put("small", 5)  # type: ignore[arg-type]
        with self.assertRaises(dtq.Invalid):
            self.mq.put("bad topic", "x")

    def test_lease_taken_over_after_its_time(self) -> None:
        other = dtq.MessageQueue(self.mq.queue, worker="py-test-other")
        self.addCleanup(other.close)
        self.mq.put("jobs", "slow")
        m = self.mq.receive("jobs", wait=2, lease_seconds=0.3)[0]
        taken = eventually("taken over", lambda: other.receive("jobs", wait=1, lease_seconds=0.3))
        self.assertEqual(taken[0].deliveries, 2)
        with self.assertRaises(dtq.LeaseLost):
            m.ack()
        taken[0].ack()


if __name__ == "__main__":
    unittest.main()
