"""Typed errors: one class per error code of dtq's HTTP API.

Every error the API answers has one shape, ``{"error": {"code", "message",
"task_id"?}}`` (docs/api.md, api/errors.go). ``error_from_answer`` turns it
into the subclass of :class:`DtqError` its code maps to, so a caller can
``except dtq.NotFound`` rather than compare strings; every subclass keeps
``.code``, ``.status`` and ``.message`` as the server sent them.

The handler-side outcomes (:class:`Permanent`, :class:`RetryAfter`) live here
too: they are what a task handler raises to say how its failure is retried.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type

__all__ = [
    "DtqError",
    "ConnectionFailed",
    "BadRequest",
    "Invalid",
    "Unauthorized",
    "Forbidden",
    "ForbiddenOrigin",
    "NotFound",
    "MethodNotAllowed",
    "Conflict",
    "InProgress",
    "NotCancellable",
    "NotDead",
    "QueueNotEmpty",
    "LeaseLost",
    "SignalDelivered",
    "TaskFinished",
    "Expired",
    "TooLarge",
    "UnsupportedMediaType",
    "IdempotencyKeyReused",
    "RateLimited",
    "QueueFull",
    "TopicFull",
    "Unavailable",
    "OutOfMemory",
    "InternalError",
    "Permanent",
    "RetryAfter",
    "WaitTimedOut",
    "ChildFailed",
    "error_from_answer",
]


class DtqError(Exception):
    """An error answered by dtq's API (or the failure to reach it).

    ``code`` is the API's error code (``"not_found"``, ``"invalid_field"`` …),
    ``status`` the HTTP status (0 when the server could not be reached),
    ``message`` the server's words (they name the offending field),
    ``task_id`` the task concerned where the answer names one, and
    ``retry_after`` the ``Retry-After`` header in seconds when it was sent.
    """

    def __init__(self, message: str, *, code: str = "", status: int = 0,
                 task_id: Optional[str] = None, retry_after: Optional[float] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.task_id = task_id
        self.retry_after = retry_after

    def __str__(self) -> str:
        where = "%d %s" % (self.status, self.code) if self.status else (self.code or "error")
        return "%s: %s" % (where, self.message)

    def __repr__(self) -> str:
        return "%s(code=%r, status=%r, message=%r)" % (type(self).__name__, self.code, self.status, self.message)


class ConnectionFailed(DtqError):
    """The server could not be reached (refused, reset, timed out): status 0."""


class BadRequest(DtqError):
    """400 bad_request: the body was malformed (not JSON, not an object …)."""


class Invalid(BadRequest):
    """400 invalid_field: a field is missing, of the wrong type or out of range.

    ``field`` is the field the message names (its first word, a path for a
    nested one: ``tasks[1].queue``; ``Idempotency-Key`` for the header), or
    ``""`` when the message names none.
    """

    @property
    def field(self) -> str:
        return field_of(self.message)


class Unauthorized(DtqError):
    """401 unauthorized: an API key is configured and X-API-Key was missing or wrong."""


class Forbidden(DtqError):
    """403 forbidden: the API key's role may not call the route (the message names the role needed)."""


class ForbiddenOrigin(DtqError):
    """403 forbidden_origin: a cross-site browser request."""


class NotFound(DtqError):
    """404 not_found: no such task, workflow, schedule, queue or route."""


class MethodNotAllowed(DtqError):
    """405 method_not_allowed."""


class Conflict(DtqError):
    """409: the request conflicts with the current state (see the subclasses)."""


class InProgress(Conflict):
    """409 in_progress: an Idempotency-Key replay while the original task runs (``task_id``)."""


class NotCancellable(Conflict):
    """409 not_cancellable: the task already finished."""


class NotDead(Conflict):
    """409 not_dead: the task is not in the dead-letter stream."""


class NotScheduled(Conflict):
    """409 not_scheduled: run now of a task that is not waiting in the schedule."""


class QueueNotEmpty(Conflict):
    """409 queue_not_empty: the queue holds tasks; delete with force=True."""


class LeaseLost(Conflict):
    """409 lease_lost: the lease is not yours any more; nothing was changed."""


class SignalDelivered(Conflict):
    """409 signal_delivered: the task has this signal already, or its wait timed out."""


class TaskFinished(Conflict):
    """409 task_finished: the task has finished and takes no signal."""


class Expired(DtqError):
    """410 expired: an Idempotency-Key replay whose original task expired (``task_id``)."""


class TooLarge(DtqError):
    """413 too_large: the body, payload or batch is over the server's cap."""


class UnsupportedMediaType(DtqError):
    """415 unsupported_media_type."""


class IdempotencyKeyReused(DtqError):
    """422 idempotency_key_reused: the key was used for a different request (``task_id``)."""


class RateLimited(DtqError):
    """429: retry after ``retry_after`` seconds (see the subclasses)."""


class QueueFull(RateLimited):
    """429 queue_full: the queue holds --max-depth unfinished tasks."""


class TopicFull(RateLimited):
    """429 topic_full: a message-queue topic holds max_size messages."""


class Unavailable(DtqError):
    """503 unavailable: Redis could not be reached, or the server is stopping."""


class OutOfMemory(Unavailable):
    """503 out_of_memory: Redis reached its maxmemory; nothing was stored."""


class InternalError(DtqError):
    """500 internal (or any other 5xx)."""


_BY_CODE: Dict[str, Type[DtqError]] = {
    "bad_request": BadRequest,
    "invalid_field": Invalid,
    "unauthorized": Unauthorized,
    "forbidden": Forbidden,
    "forbidden_origin": ForbiddenOrigin,
    "not_found": NotFound,
    "method_not_allowed": MethodNotAllowed,
    "conflict": Conflict,
    "in_progress": InProgress,
    "not_cancellable": NotCancellable,
    "not_dead": NotDead,
    "not_scheduled": NotScheduled,
    "queue_not_empty": QueueNotEmpty,
    "lease_lost": LeaseLost,
    "signal_delivered": SignalDelivered,
    "task_finished": TaskFinished,
    "expired": Expired,
    "too_large": TooLarge,
    "unsupported_media_type": UnsupportedMediaType,
    "idempotency_key_reused": IdempotencyKeyReused,
    "upgrade_required": BadRequest,
    "queue_full": QueueFull,
    "topic_full": TopicFull,
    "unavailable": Unavailable,
    "out_of_memory": OutOfMemory,
    "internal": InternalError,
}

# A status alone picks the class when the code is unknown (a newer server,
# or a proxy in between answering with its own body).
_BY_STATUS: Dict[int, Type[DtqError]] = {
    400: BadRequest, 401: Unauthorized, 403: ForbiddenOrigin, 404: NotFound, 405: MethodNotAllowed,
    409: Conflict, 410: Expired, 413: TooLarge, 415: UnsupportedMediaType, 422: IdempotencyKeyReused,
    429: RateLimited, 503: Unavailable,
}


def error_from_answer(status: int, answer: Any, retry_after: Optional[float] = None) -> DtqError:
    """The DtqError for an error answer: ``answer`` is the decoded body (or
    None when it was not JSON)."""
    detail: Dict[str, Any] = {}
    if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
        detail = answer["error"]
    code = str(detail.get("code") or "")
    message = str(detail.get("message") or "HTTP %d" % status)
    cls = _BY_CODE.get(code) or _BY_STATUS.get(status) or (InternalError if status >= 500 else DtqError)
    task_id = detail.get("task_id")
    return cls(message, code=code, status=status, task_id=task_id if isinstance(task_id, str) else None,
               retry_after=retry_after)


def field_of(message: str) -> str:
    """The field an invalid_field message names: its first word, or the
    header in "the Idempotency-Key header …", or "" for none."""
    if message.startswith("the ") and " header" in message:
        return message[len("the "):message.index(" header")]
    if message.startswith("the lease token"):
        return "lease"
    return message.split(" ", 1)[0] if message else ""


# What a task handler raises.

class Permanent(Exception):
    """Raised by a handler: the failure is for good, the task goes DEAD at once."""


class RetryAfter(Exception):
    """Raised by a handler: a retryable failure, to retry no sooner than
    ``seconds`` from now (instead of the default backoff)."""

    def __init__(self, seconds: float, message: str = "retry later") -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
            raise ValueError("RetryAfter: seconds must be a number >= 0, got %r" % (seconds,))
        super().__init__(message)
        self.seconds = float(seconds)


class WaitTimedOut(Exception):
    """Raised by ``ctx.wait_for`` when no signal came within its timeout."""

    def __init__(self, signal: str) -> None:
        super().__init__("the wait for signal %r timed out" % signal)
        self.signal = signal


class ChildFailed(Exception):
    """Raised by ``ctx.child`` when the child task ended DEAD or CANCELLED."""

    def __init__(self, task_id: str, status: str, error: str) -> None:
        super().__init__("child %s ended %s: %s" % (task_id, status, error))
        self.task_id = task_id
        self.status = status
        self.error = error
