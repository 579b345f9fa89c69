"""dtq.Client: submit and manage tasks over dtq's HTTP API (docs/api.md).

    client = dtq.Client()                         # $DTQ_API_URL, else http://localhost:8000
    task = client.submit("resize", {"image": "cat.png"}, queue="images", priority=7)
    client.get(task.id).status                    # "QUEUED", …, "SUCCEEDED"

Every method is one HTTP call (list_all follows cursors); an error answer
raises the DtqError subclass of its code (dtq.NotFound, dtq.Invalid …).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from ._http import Transport, quote
from ._submission import Debounce, submission, submission_of
from .errors import error_from_answer
from .types import (BatchItem, DeadLetter, Page, QueueStats, RedriveResult, Schedule, SignalAnswer, Task,
                    WorkerInfo, Workflow)

Json = Dict[str, Any]
When = Union[_dt.datetime, str, None]

__all__ = ["Client", "node", "chain", "parallel"]


def _time(name: str, v: When) -> Optional[str]:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=_dt.timezone.utc)
        return v.isoformat()
    raise TypeError("%s: must be a datetime or an RFC 3339 string, got %r" % (name, v))


class Client:
    """A client of one dtq server.

    ``url`` defaults to $DTQ_API_URL, else http://localhost:8000; ``api_key``
    to $DTQ_API_KEY (sent as X-API-Key); ``timeout`` bounds each request, in
    seconds. Thread-safe; it keeps a pool of keep-alive connections
    (``close()`` closes the idle ones; a Client is also a context manager).
    """

    def __init__(self, url: Optional[str] = None, api_key: Optional[str] = None, timeout: float = 30.0) -> None:
        self._t = Transport(url, api_key, timeout)
        self.workflows = Workflows(self._t)
        self.schedules = Schedules(self._t)
        self.dead_letters = DeadLetters(self._t)
        self.queues = Queues(self._t)

    @property
    def url(self) -> str:
        return self._t.url

    def close(self) -> None:
        self._t.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # Tasks.

    def submit(self, type: str, payload: Any = None, *, queue: Optional[str] = None,
               priority: Optional[int] = None, delay: Optional[float] = None,
               run_at: Union[_dt.datetime, float, None] = None, max_attempts: Optional[int] = None,
               timeout: Optional[float] = None, idempotency_key: Optional[str] = None,
               unique: Union[bool, str, None] = None, unique_states: Optional[Sequence[str]] = None,
               unique_period: Optional[float] = None, group: Optional[str] = None,
               limit_key: Optional[str] = None, order_key: Optional[str] = None,
               debounce: Union[Debounce, Dict[str, Any], None] = None) -> Task:
        """Submits a task of ``type`` with ``payload`` (any JSON value).

        queue (default "default"), priority 0-9 (default 5, higher first),
        delay seconds or run_at (a datetime or Unix time) to schedule it,
        max_attempts (default 10), timeout seconds per execution (default
        1800), idempotency_key (the Idempotency-Key header: a repeat answers
        the original task), unique=True (by payload) or unique="<key>" with
        unique_states and unique_period seconds, group (fair scheduling
        among tenants), limit_key (the limits of that key), order_key (the
        tasks of that key run one at a time, in submission order; a task
        waiting for its turn shows ``order_waiting``), debounce (a
        dtq.Debounce or a dict of its fields: a submission while the key's
        task is pending joins it). Returns the task; ``task.duplicate`` is
        True when nothing new was created, ``task.debounced`` when the
        submission joined the pending debounced task."""
        body = submission(type, payload, queue=queue, priority=priority, delay=delay, run_at=run_at,
                          max_attempts=max_attempts, timeout=timeout, unique=unique, unique_states=unique_states,
                          unique_period=unique_period, group=group, limit_key=limit_key, order_key=order_key,
                          debounce=debounce)
        headers = None
        if idempotency_key is not None:
            if not isinstance(idempotency_key, str) or not idempotency_key:
                raise ValueError("idempotency_key: must be a non-empty string, got %r" % (idempotency_key,))
            headers = {"Idempotency-Key": idempotency_key}
        return Task.from_json(self._t.call("POST", "/api/v1/tasks", body, headers=headers))

    def submit_many(self, tasks: Sequence[Json]) -> List[BatchItem]:
        """Submits independent tasks in one request (POST /api/v1/tasks/batch):
        each item a dict of submit()'s arguments (``type``, ``payload``,
        ``queue`` … but no idempotency_key). Returns one BatchItem per item,
        in order: its task, or the DtqError that refused it."""
        if isinstance(tasks, (str, bytes, dict)):
            raise TypeError("tasks: must be a list of dicts, got %r" % type(tasks).__name__)
        bodies = [submission_of(item, i) for i, item in enumerate(tasks)]
        ans = self._t.call("POST", "/api/v1/tasks/batch", {"tasks": bodies})
        out: List[BatchItem] = []
        for r in ans["results"]:
            st = int(r.get("status", 0))
            if "task" in r and r["task"] is not None:
                out.append(BatchItem(status=st, task=Task.from_json(r["task"])))
            else:
                out.append(BatchItem(status=st, error=error_from_answer(st, r)))
        return out

    def get(self, task_id: str) -> Task:
        """The task, with its history and steps. NotFound if unknown or expired."""
        return Task.from_json(self._t.call("GET", "/api/v1/tasks/" + quote(task_id, "task_id")))

    def list(self, queue: Optional[str] = None, *, status: Optional[str] = None, type: Optional[str] = None,
             suspended: Optional[bool] = None, id_prefix: Optional[str] = None, error: Optional[str] = None,
             created_after: When = None, created_before: When = None, limit: Optional[int] = None,
             cursor: Optional[str] = None) -> Page[Task]:
        """One page of a queue's tasks (default "default"), filtered by status,
        type, suspended, id_prefix, a part of the last error, creation time;
        limit 1-500 (default 50). Follow ``page.next_cursor`` (or use list_all)."""
        q = {"queue": queue, "status": status, "type": type, "suspended": suspended, "id_prefix": id_prefix,
             "error": error, "created_after": _time("created_after", created_after),
             "created_before": _time("created_before", created_before), "limit": limit, "cursor": cursor}
        ans = self._t.call("GET", "/api/v1/tasks", query=q)
        return Page([Task.from_json(t) for t in ans["tasks"]], ans.get("next_cursor", ""))

    def list_all(self, queue: Optional[str] = None, **filters: Any) -> Iterator[Task]:
        """Every task list() matches, following the cursors page by page."""
        cursor = None
        while True:
            page = self.list(queue, cursor=cursor, **filters)
            yield from page.items
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def cancel(self, task_id: str) -> Task:
        """Cancels a queued, scheduled or running task (a running one shows
        cancel_requested until its worker stops). NotCancellable if it
        finished otherwise."""
        return Task.from_json(self._t.call("POST", "/api/v1/tasks/%s/cancel" % quote(task_id, "task_id")))

    def signal(self, task_id: str, name: str, payload: Any = None) -> SignalAnswer:
        """Sends signal ``name`` with ``payload`` to the task, for its durable
        wait of that name. SignalDelivered (the error) when it has that signal
        already, TaskFinished when it finished."""
        path = "/api/v1/tasks/%s/signals/%s" % (quote(task_id, "task_id"), quote(name, "name"))
        return SignalAnswer.from_json(self._t.call("POST", path, {"payload": payload}))

    def workers(self) -> List[WorkerInfo]:
        """The live workers: Go workers and HTTP lease holders (this library's)."""
        return [WorkerInfo.from_json(w) for w in self._t.call("GET", "/api/v1/workers")["workers"]]

    def request(self, method: str, path: str, body: Any = None, **query: Any) -> Any:
        """Any other route of the API (limits, groups, audit …): the decoded
        answer, or the DtqError of an error answer."""
        return self._t.call(method, path, body, query=query or None)


# Workflows.

def node(type: str, payload: Any = None, *, priority: Optional[int] = None, max_attempts: Optional[int] = None,
         timeout: Optional[float] = None) -> Json:
    """A workflow's task node (its queue is the workflow's)."""
    return {"task": submission(type, payload, priority=priority, max_attempts=max_attempts, timeout=timeout)}


def chain(*nodes: Json) -> Json:
    """A workflow node that runs nodes one after the other, each getting the
    previous one's result as ``previous``."""
    return {"chain": list(nodes)}


def parallel(*nodes: Json, on_success: Optional[Json] = None, on_complete: Optional[Json] = None) -> Json:
    """A workflow node that runs nodes at once, then on_success (all
    succeeded) or on_complete (all ended)."""
    n: Json = {"parallel": list(nodes)}
    if on_success is not None:
        n["on_success"] = on_success
    if on_complete is not None:
        n["on_complete"] = on_complete
    return n


class Workflows:
    """client.workflows: chains and parallel nodes with callbacks (docs/workflows.md)."""

    def __init__(self, t: Transport) -> None:
        self._t = t

    def submit(self, root: Json, *, queue: Optional[str] = None, idempotency_key: Optional[str] = None) -> Workflow:
        """Submits a workflow whose root is node(), chain() or parallel()."""
        if not isinstance(root, dict):
            raise TypeError("root: must be a node (dtq.node, dtq.chain, dtq.parallel), got %r" % (root,))
        body: Json = {"root": root}
        if queue is not None:
            body["queue"] = queue
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return Workflow.from_json(self._t.call("POST", "/api/v1/workflows", body, headers=headers))

    def get(self, workflow_id: str) -> Workflow:
        return Workflow.from_json(self._t.call("GET", "/api/v1/workflows/" + quote(workflow_id, "workflow_id")))

    def cancel(self, workflow_id: str) -> Workflow:
        path = "/api/v1/workflows/%s/cancel" % quote(workflow_id, "workflow_id")
        return Workflow.from_json(self._t.call("POST", path))


class Schedules:
    """client.schedules: periodic tasks, by queue and name (docs/schedules.md)."""

    def __init__(self, t: Transport) -> None:
        self._t = t

    @staticmethod
    def _path(queue: str, name: str) -> str:
        return "/api/v1/schedules/%s/%s" % (quote(queue, "queue"), quote(name, "name"))

    def put(self, queue: str, name: str, *, cron: str, task_type: str, payload: Any = None,
            time_zone: Optional[str] = None, priority: Optional[int] = None, max_attempts: Optional[int] = None,
            timeout: Optional[float] = None, missed: Optional[str] = None, catch_up_max: Optional[int] = None,
            paused: Optional[bool] = None) -> Schedule:
        """Creates or replaces the schedule: cron (5 or 6 fields, @daily, @every
        1m …) in time_zone (default UTC), the task each tick creates, missed
        ("skip" or "catch_up") and catch_up_max, paused."""
        if not isinstance(cron, str) or not cron:
            raise ValueError("cron: must be a non-empty string, got %r" % (cron,))
        body: Json = {"cron": cron, "task_type": task_type}
        for k, v in (("payload", payload), ("time_zone", time_zone), ("priority", priority),
                     ("max_attempts", max_attempts), ("timeout_seconds", timeout), ("missed", missed),
                     ("catch_up_max", catch_up_max), ("paused", paused)):
            if v is not None:
                body[k] = v
        return Schedule.from_json(self._t.call("PUT", self._path(queue, name), body))

    def get(self, queue: str, name: str) -> Schedule:
        return Schedule.from_json(self._t.call("GET", self._path(queue, name)))

    def list(self, queue: Optional[str] = None) -> List[Schedule]:
        """The schedules of queue, or of every queue."""
        ans = self._t.call("GET", "/api/v1/schedules", query={"queue": queue})
        return [Schedule.from_json(s) for s in ans["schedules"]]

    def delete(self, queue: str, name: str) -> None:
        self._t.call("DELETE", self._path(queue, name))

    def pause(self, queue: str, name: str) -> Schedule:
        return Schedule.from_json(self._t.call("POST", self._path(queue, name) + "/pause"))

    def resume(self, queue: str, name: str) -> Schedule:
        return Schedule.from_json(self._t.call("POST", self._path(queue, name) + "/resume"))


class DeadLetters:
    """client.dead_letters: tasks that went DEAD."""

    def __init__(self, t: Transport) -> None:
        self._t = t

    def list(self, queue: Optional[str] = None, *, limit: Optional[int] = None,
             cursor: Optional[str] = None) -> Page[DeadLetter]:
        """One page of a queue's dead letters (default "default"), newest first."""
        ans = self._t.call("GET", "/api/v1/dlq", query={"queue": queue, "limit": limit, "cursor": cursor})
        return Page([DeadLetter.from_json(d) for d in ans["dead_letters"]], ans.get("next_cursor", ""))

    def requeue(self, task_id: str) -> Task:
        """Requeues one dead task (attempts reset). NotDead if it is not dead."""
        return Task.from_json(self._t.call("POST", "/api/v1/dlq/%s/requeue" % quote(task_id, "task_id")))

    def requeue_all(self, queue: Optional[str] = None) -> int:
        """Requeues every dead letter of queue (or of every queue); returns how many."""
        return int(self._t.call("POST", "/api/v1/dlq/requeue", query={"queue": queue})["requeued"])

    def redrive(self, queue: Optional[str] = None, *, task_type: Optional[str] = None,
                error_contains: Optional[str] = None, dead_after: When = None, dead_before: When = None,
                dry_run: bool = False, limit: Optional[int] = None,
                rate_per_second: Optional[float] = None) -> RedriveResult:
        """Requeues the dead letters that match (type, a part of the reason,
        when they died), at most limit, paced at rate_per_second; dry_run
        only counts. ``more`` says more match beyond the limit."""
        body: Json = {}
        for k, v in (("queue", queue), ("task_type", task_type), ("error_contains", error_contains),
                     ("dead_after", _time("dead_after", dead_after)),
                     ("dead_before", _time("dead_before", dead_before)), ("limit", limit),
                     ("rate_per_second", rate_per_second)):
            if v is not None:
                body[k] = v
        if dry_run:
            body["dry_run"] = True
        return RedriveResult.from_json(self._t.call("POST", "/api/v1/dlq/redrive", body))

    def discard(self, task_id: str) -> None:
        """Deletes one dead task. NotDead if it is not dead."""
        self._t.call("DELETE", "/api/v1/dlq/" + quote(task_id, "task_id"))

    def purge(self, queue: Optional[str] = None) -> int:
        """Deletes every dead letter of queue (or of every queue); returns how many."""
        return int(self._t.call("DELETE", "/api/v1/dlq", query={"queue": queue})["discarded"])


class Queues:
    """client.queues: counts, pause and resume."""

    def __init__(self, t: Transport) -> None:
        self._t = t

    def list(self) -> List[QueueStats]:
        return [QueueStats.from_json(q) for q in self._t.call("GET", "/api/v1/queues")["queues"]]

    def get(self, name: str) -> QueueStats:
        return QueueStats.from_json(self._t.call("GET", "/api/v1/queues/" + quote(name, "name")))

    def pause(self, name: str) -> QueueStats:
        """No task of the queue starts until resume (running ones go on)."""
        return QueueStats.from_json(self._t.call("POST", "/api/v1/queues/%s/pause" % quote(name, "name")))

    def resume(self, name: str) -> QueueStats:
        return QueueStats.from_json(self._t.call("POST", "/api/v1/queues/%s/resume" % quote(name, "name")))

    def delete(self, name: str, *, force: bool = False) -> Json:
        """Deletes the queue; QueueNotEmpty unless it is empty or force=True."""
        return self._t.call("DELETE", "/api/v1/queues/" + quote(name, "name"), query={"force": force or None})



