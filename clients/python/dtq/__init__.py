"""dtq: the Python client library of dtq, the distributed task queue.

    import dtq

    client = dtq.Client()                                   # $DTQ_API_URL, else http://localhost:8000
    client.submit("resize", {"image": "cat.png"}, queue="images")

    worker = dtq.Worker(queues=["images"])

    @worker.task("resize")
    def resize(payload, ctx):
        ctx.progress(0.5, "half")
        return {"resized": payload["image"]}

    worker.run()

Standard library only; everything goes over dtq's HTTP API (docs/python.md).
"""

from ._submission import Debounce
from .client import Client, chain, node, parallel
from .context import Cancelled, Context, LeaseDropped, Suspended
from .errors import (BadRequest, ChildFailed, Conflict, ConnectionFailed, DtqError, Expired, Forbidden,
                     ForbiddenOrigin,
                     IdempotencyKeyReused, InProgress, InternalError, Invalid, LeaseLost, MethodNotAllowed,
                     NotCancellable, NotDead, NotFound, NotScheduled, OutOfMemory, Permanent, QueueFull, QueueNotEmpty,
                     RateLimited, RetryAfter, SignalDelivered, TaskFinished, TooLarge, TopicFull, Unauthorized,
                     Unavailable, UnsupportedMediaType, WaitTimedOut)
from .mq import Message, MessageQueue
from .types import (BatchItem, ChildEnd, DeadLetter, DeadMessage, Execution, Page, QueueStats, RedriveResult,
                    Schedule, SignalAnswer, Suspension, Task, TaskProgress, TaskStep, TopicStats,
                    WorkerInfo, Workflow, WorkflowNode, WorkflowProgress)
from .version import LIBRARY, __version__
from .worker import Worker

__all__ = [
    "Client", "Worker", "Context", "MessageQueue", "Message", "Debounce", "node", "chain", "parallel",
    "Permanent", "RetryAfter", "Cancelled", "Suspended", "LeaseDropped", "WaitTimedOut", "ChildFailed",
    "DtqError", "ConnectionFailed", "BadRequest", "Invalid", "Unauthorized", "Forbidden", "ForbiddenOrigin",
    "NotFound",
    "MethodNotAllowed", "Conflict", "InProgress", "NotCancellable", "NotDead", "NotScheduled", "QueueNotEmpty", "LeaseLost",
    "SignalDelivered", "TaskFinished", "Expired", "TooLarge", "UnsupportedMediaType", "IdempotencyKeyReused",
    "RateLimited", "QueueFull", "TopicFull", "Unavailable", "OutOfMemory", "InternalError",
    "Task", "Execution", "TaskStep", "Suspension", "TaskProgress", "Page", "BatchItem", "Workflow",
    "WorkflowNode", "WorkflowProgress", "Schedule", "QueueStats", "WorkerInfo", "DeadLetter", "RedriveResult",
    "SignalAnswer", "ChildEnd", "TopicStats", "DeadMessage", "LIBRARY", "__version__",
]
