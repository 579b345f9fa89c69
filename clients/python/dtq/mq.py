"""dtq.MessageQueue: the keyed, reliable message queue (package queue) over HTTP.

    mq = dtq.MessageQueue("orders")
    mq.put("new", b"...", key="order-17")
    for m in mq.receive(["new"], max=10, wait=5):
        handle(m.data)
        m.ack()

Messages are opaque bytes on topics; a lease competes in one consumer group
with Go subscriptions of the same queue (one delivery, two transports). A
lease not extended (m.extend()) within lease_seconds is taken over by the
group's next reader, and the late holder's settle raises LeaseLost with
nothing changed (docs/workers.md, "The reliable message queue over HTTP").
"""

from __future__ import annotations

import base64
import os
import socket
from typing import Any, Dict, List, Optional, Sequence, Union

from ._http import Transport, quote
from .types import DeadMessage, TopicStats

Json = Dict[str, Any]

__all__ = ["MessageQueue", "Message"]


class Message:
    """A leased message: settle it once with ack, nak, term or release."""

    __slots__ = ("_mq", "lease", "deadline", "topic", "id", "key", "deliveries", "data")

    def __init__(self, mq: "MessageQueue", d: Json) -> None:
        self._mq = mq
        self.lease: str = d["lease"]
        self.deadline: str = d.get("deadline", "")
        self.topic: str = d.get("topic", "")
        self.id: str = d.get("id", "")
        self.key: str = d.get("key", "")
        self.deliveries: int = int(d.get("deliveries", 1))
        text = d.get("data")
        self.data: bytes = text.encode() if isinstance(text, str) else base64.b64decode(d.get("data_base64") or "")

    @property
    def text(self) -> str:
        """The body as UTF-8 text (raises UnicodeDecodeError if it is not)."""
        return self.data.decode()

    def __repr__(self) -> str:
        return "Message(topic=%r, id=%r, key=%r, deliveries=%d, data=%r)" % (
            self.topic, self.id, self.key, self.deliveries, self.data[:64])

    def ack(self) -> None:
        """Done with it: the message is deleted (its key free again)."""
        self._mq._settle(self, "ack", None)

    def nak(self, delay: Optional[float] = None) -> None:
        """Give it back, to be delivered again after delay seconds (default at once)."""
        self._mq._settle(self, "nak", None if delay is None else {"delay_seconds": _seconds("delay", delay)})

    def term(self, reason: Optional[str] = None) -> None:
        """Refuse it for good: it goes to the queue's dead letters with reason."""
        self._mq._settle(self, "term", None if reason is None else {"reason": reason})

    def release(self, topic: str, max_size: Optional[int] = None) -> None:
        """Move it to another topic of the queue (TopicFull when that holds max_size)."""
        body: Json = {"topic": topic}
        if max_size is not None:
            body["max_size"] = max_size
        self._mq._settle(self, "release", body)

    def extend(self) -> str:
        """Renews the lease for lease_seconds; returns the new deadline."""
        ans = self._mq._t.call("POST", self._mq._lease_path(self.lease, "extend"))
        self.deadline = ans.get("deadline", self.deadline)
        return self.deadline


class MessageQueue:
    """The message queue ``queue`` of a dtq server.

    url / api_key / timeout: as Client. group: the consumer group (default
    "dtq", the Go subscriptions' default). worker: this reader's name in the
    group (default py-<host>-<pid>)."""

    def __init__(self, queue: str, url: Optional[str] = None, *, api_key: Optional[str] = None,
                 group: Optional[str] = None, worker: Optional[str] = None, timeout: float = 30.0) -> None:
        self.queue = queue
        self._q = quote(queue, "queue")
        self.group = group
        self.worker = worker or "py-%s-%d" % (socket.gethostname(), os.getpid())
        self._t = Transport(url, api_key, timeout)

    def close(self) -> None:
        self._t.close()

    def put(self, topic: str, data: Union[bytes, str], key: Optional[str] = None, delay: Optional[float] = None,
            max_size: Optional[int] = None) -> bool:
        """Puts a message on topic: data as bytes (or str, sent as UTF-8).
        key deduplicates while a message of that key is live (then nothing
        is written and put returns False); delay seconds before it is
        deliverable; max_size: TopicFull when the topic holds that many."""
        body: Json = {}
        if isinstance(data, str):
            body["data"] = data
        elif isinstance(data, (bytes, bytearray, memoryview)):
            body["data_base64"] = base64.b64encode(bytes(data)).decode()
        else:
            raise TypeError("data: must be bytes or str, got %r" % type(data).__name__)
        if key is not None:
            body["key"] = key
        if delay is not None:
            body["delay_seconds"] = _seconds("delay", delay)
        if max_size is not None:
            body["max_size"] = max_size
        path = "/api/v1/mq/%s/topics/%s/messages" % (self._q, quote(topic, "topic"))
        return bool(self._t.call("POST", path, body).get("published"))

    def receive(self, topics: Union[str, Sequence[str]], max: int = 1, wait: float = 0.0,
                lease_seconds: Optional[float] = None) -> List[Message]:
        """Leases up to max messages of topics (highest priority first),
        waiting up to wait seconds (0-20) for a first one; each lease lasts
        lease_seconds (default 30) unless extended."""
        if isinstance(topics, str):
            topics = [topics]
        if not topics:
            raise ValueError("topics: must name at least one topic")
        body: Json = {"worker": self.worker, "topics": list(topics), "max": max,
                      "wait_seconds": _seconds("wait", wait)}
        if self.group is not None:
            body["group"] = self.group
        if lease_seconds is not None:
            body["lease_seconds"] = _seconds("lease_seconds", lease_seconds)
        ans = self._t.call("POST", "/api/v1/mq/%s/leases" % self._q, body, timeout=wait + self._t.timeout)
        return [Message(self, d) for d in ans.get("leases") or ()]

    def topic(self, topic: str, group: Optional[str] = None) -> TopicStats:
        """A topic's counts (queued, in_flight, delayed) for group."""
        ans = self._t.call("GET", "/api/v1/mq/%s/topics/%s" % (self._q, quote(topic, "topic")),
                           query={"group": group or self.group})
        return TopicStats.from_json(ans)

    def dead(self, limit: Optional[int] = None) -> List[DeadMessage]:
        """The queue's dead-lettered messages, newest first."""
        ans = self._t.call("GET", "/api/v1/mq/%s/dead" % self._q, query={"limit": limit})
        return [DeadMessage.from_json(d) for d in ans.get("dead") or ()]

    def _lease_path(self, lease: str, verb: str) -> str:
        return "/api/v1/mq/%s/leases/%s/%s" % (self._q, lease, verb)

    def _settle(self, m: Message, verb: str, body: Optional[Json]) -> None:
        self._t.call("POST", self._lease_path(m.lease, verb), body)


def _seconds(name: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise ValueError("%s: must be a number of seconds >= 0, got %r" % (name, v))
    return v
