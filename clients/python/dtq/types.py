"""Typed results: dataclasses for the API's answers (api/openapi.json).

Each has the schema's fields under the same names (times stay the API's
RFC 3339 strings: ``2026-12-05T17:14:18.910Z``), and ``raw``, the answer's
dict as it came, so that a field a newer server adds is still reachable.
Unknown fields are ignored rather than refused: a newer server must not
break an older client.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Generic, List, Optional, Tuple, Type, TypeVar

T = TypeVar("T")
Json = Dict[str, Any]

__all__ = [
    "Task", "Execution", "TaskStep", "Suspension", "TaskProgress", "Page", "BatchItem",
    "Workflow", "WorkflowNode", "WorkflowProgress", "Schedule", "QueueStats", "WorkerInfo",
    "DeadLetter", "RedriveResult", "SignalAnswer", "ChildEnd",
    "TopicStats", "DeadMessage",
]


_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _from(cls: Type[T], d: Any, nested: Optional[Dict[str, Callable[[Any], Any]]] = None) -> T:
    """cls built from the dict d: its known fields, converted by nested."""
    if not isinstance(d, dict):
        raise TypeError("%s: expected a JSON object, got %r" % (cls.__name__, d))
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.name != "raw")  # type: ignore
    kw: Dict[str, Any] = {"raw": d}
    for name in names:
        if name in d:
            v = d[name]
            if nested and name in nested and v is not None:
                v = nested[name](v)
            kw[name] = v
    return cls(**kw)


def _list(conv: Callable[[Any], T]) -> Callable[[Any], List[T]]:
    return lambda vs: [conv(v) for v in vs]


@dataclass
class Execution:
    """One execution of a task (its ``history``)."""
    run: int = 0
    started_at: str = ""
    finished_at: str = ""
    worker: str = ""
    outcome: str = ""  # succeeded, retried, dead, cancelled, lost, suspended
    error: Optional[str] = None
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "Execution":
        return _from(cls, d)


@dataclass
class TaskStep:
    """A durable step the task recorded."""
    name: str = ""
    run: int = 0
    at: str = ""
    result: Any = None
    by: Optional[str] = None  # "signal" or "timeout" for a wait's record no run made
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "TaskStep":
        return _from(cls, d)


@dataclass
class Suspension:
    """What a suspended task waits for (``for_``: sleep, signal or child) and until when."""
    for_: str = ""
    name: str = ""
    until: str = ""
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "Suspension":
        s = _from(cls, d)
        s.for_ = str(d.get("for", ""))
        return s


@dataclass
class TaskProgress:
    """What the running execution last reported."""
    fraction: float = 0.0
    note: Optional[str] = None
    at: str = ""
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "TaskProgress":
        return _from(cls, d)


@dataclass
class Task:
    """A task as GET /api/v1/tasks/{id} shows it."""
    id: str = ""
    queue: str = ""
    task_type: str = ""
    payload: Any = None
    priority: int = 5
    status: str = ""  # QUEUED, SCHEDULED, RUNNING, SUCCEEDED, DEAD, CANCELLED
    attempt: int = 0
    max_attempts: int = 0
    crashes: int = 0
    timeout_seconds: float = 0.0
    created_at: str = ""
    scheduled_at: Optional[str] = None
    started_at: Optional[str] = None
    finished_at: Optional[str] = None
    result: Any = None
    last_error: Optional[str] = None
    worker: Optional[str] = None
    cancel_requested: bool = False
    schedule: Optional[str] = None
    schedule_tick: Optional[str] = None
    group: Optional[str] = None
    group_waiting: bool = False
    limit_key: Optional[str] = None
    order_key: Optional[str] = None
    order_waiting: bool = False
    held_by: Optional[str] = None
    progress: Optional[TaskProgress] = None
    workflow: Optional[str] = None
    workflow_node: Optional[int] = None
    previous: Any = None
    steps: Optional[List[TaskStep]] = None
    suspended: Optional[Suspension] = None
    traceparent: Optional[str] = None
    duplicate: bool = False
    debounced: bool = False
    history: List[Execution] = field(default_factory=list)
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "Task":
        return _from(cls, d, {
            "progress": TaskProgress.from_json,
            "steps": _list(TaskStep.from_json),
            "suspended": Suspension.from_json,
            "history": _list(Execution.from_json),
        })

    @property
    def done(self) -> bool:
        """Whether the task reached a final status (SUCCEEDED, DEAD, CANCELLED)."""
        return self.status in ("SUCCEEDED", "DEAD", "CANCELLED")


@dataclass
class Page(Generic[T]):
    """One page of a list: its items and the cursor of the next page ("" at the end)."""
    items: List[T]
    next_cursor: str = ""


@dataclass
class BatchItem:
    """One item of submit_many's answer: the task (status 201, or 200 for a
    duplicate) or the error that refused it."""
    status: int
    task: Optional[Task] = None
    error: Optional[Exception] = None

    @property
    def ok(self) -> bool:
        return self.task is not None


@dataclass
class WorkflowProgress:
    total: int = 0
    pending: int = 0
    active: int = 0
    succeeded: int = 0
    failed: int = 0
    cancelled: int = 0
    skipped: int = 0
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "WorkflowProgress":
        return _from(cls, d)


@dataclass
class WorkflowNode:
    """A node of a workflow's graph."""
    node: int = 0
    kind: str = ""  # task, chain, parallel
    status: str = ""  # PENDING, ACTIVE, SUCCEEDED, FAILED, CANCELLED, SKIPPED
    task_id: Optional[str] = None
    task_type: Optional[str] = None
    result: Any = None
    error: Optional[str] = None
    nodes: Optional[List["WorkflowNode"]] = None
    children: Optional[List["WorkflowNode"]] = None
    on_success: Optional["WorkflowNode"] = None
    on_complete: Optional["WorkflowNode"] = None
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "WorkflowNode":
        return _from(cls, d, {
            "nodes": _list(WorkflowNode.from_json),
            "children": _list(WorkflowNode.from_json),
            "on_success": WorkflowNode.from_json,
            "on_complete": WorkflowNode.from_json,
        })


@dataclass
class Workflow:
    """A workflow (GET /api/v1/workflows/{id})."""
    id: str = ""
    queue: str = ""
    status: str = ""  # RUNNING, SUCCEEDED, FAILED, CANCELLED
    cancel_requested: bool = False
    created_at: str = ""
    finished_at: Optional[str] = None
    result: Any = None
    error: Optional[str] = None
    progress: Optional[WorkflowProgress] = None
    duplicate: bool = False
    root: Optional[WorkflowNode] = None
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "Workflow":
        return _from(cls, d, {"progress": WorkflowProgress.from_json, "root": WorkflowNode.from_json})


@dataclass
class Schedule:
    """A periodic task (GET /api/v1/schedules/{queue}/{name})."""
    name: str = ""
    queue: str = ""
    cron: str = ""
    time_zone: str = ""
    task_type: str = ""
    payload: Any = None
    priority: int = 5
    max_attempts: int = 0
    timeout_seconds: float = 0.0
    missed: str = ""
    catch_up_max: int = 0
    paused: bool = False
    created_at: str = ""
    updated_at: str = ""
    next_run: Optional[str] = None
    last_tick: Optional[str] = None
    last_task_id: Optional[str] = None
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "Schedule":
        return _from(cls, d)


@dataclass
class QueueStats:
    """A queue's counts (GET /api/v1/queues/{name})."""
    name: str = ""
    paused: bool = False
    queued: int = 0
    scheduled: int = 0
    running: int = 0
    dead: int = 0
    queued_by_priority: List[int] = field(default_factory=list)
    group_waiting: int = 0
    limit_waiting: int = 0
    order_waiting: int = 0
    suspended: int = 0
    submitted_total: int = 0
    succeeded_total: int = 0
    retried_total: int = 0
    dead_total: int = 0
    cancelled_total: int = 0
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "QueueStats":
        return _from(cls, d)


@dataclass
class WorkerInfo:
    """A worker as GET /api/v1/workers lists it (kind "go" or "http")."""
    id: str = ""
    kind: str = ""
    library: Optional[str] = None
    host: str = ""
    pid: int = 0
    queues: Optional[List[str]] = None
    concurrency: int = 0
    busy: int = 0
    started_at: str = ""
    last_heartbeat: str = ""
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "WorkerInfo":
        return _from(cls, d)


@dataclass
class DeadLetter:
    """A dead task and why it died."""
    task: Task
    reason: str = ""
    dead_at: str = ""
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "DeadLetter":
        return cls(task=Task.from_json(d.get("task") or {}), reason=str(d.get("reason", "")),
                   dead_at=str(d.get("dead_at", "")), raw=d)


@dataclass
class RedriveResult:
    matched: int = 0
    requeued: int = 0
    dry_run: bool = False
    more: bool = False
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "RedriveResult":
        return _from(cls, d)


@dataclass
class SignalAnswer:
    task_id: str = ""
    name: str = ""
    delivered: bool = False
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "SignalAnswer":
        return _from(cls, d)


@dataclass
class ChildEnd:
    """How a child task ended (ctx.child's answer)."""
    task_id: str = ""
    status: str = ""
    result: Any = None
    error: Optional[str] = None
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "ChildEnd":
        return _from(cls, d)


@dataclass
class TopicStats:
    """A message-queue topic's counts for one consumer group."""
    topic: str = ""
    group: str = ""
    queued: int = 0
    in_flight: int = 0
    delayed: int = 0
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "TopicStats":
        return _from(cls, d)


@dataclass
class DeadMessage:
    """A dead-lettered message: ``data`` is its body as bytes."""
    id: str = ""
    topic: str = ""
    message_id: str = ""
    key: str = ""
    deliveries: int = 0
    reason: str = ""
    data: bytes = b""
    raw: Json = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, d: Any) -> "DeadMessage":
        import base64
        m = _from(cls, {k: v for k, v in d.items() if k != "data"})
        m.data = base64.b64decode(d.get("data_base64") or "")
        m.raw = d
        return m
