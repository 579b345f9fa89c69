"""dtq.Context: what a task handler knows of its lease, and what it may ask.

A handler is ``fn(payload, ctx)``. Through ``ctx`` it reads the task
(``ctx.task``, ``ctx.attempt``), reports progress, learns of a cancellation
(``ctx.cancelled``, ``ctx.wait_cancelled``), and runs durable steps, sleeps,
waits for signals and child tasks (docs/durable.md) over the lease's routes.

A durable sleep, wait or child that is not over yet ends the lease with the
task suspended: ``ctx.sleep``/``ctx.wait_for``/``ctx.child`` then raise
:class:`Suspended`, a BaseException so that ``except Exception`` in the
handler does not swallow it; the worker reports nothing for the task, which
is leased again when it is due and runs from the top (recorded steps skipped).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, TypeVar

from ._http import Transport, quote
from ._submission import submission
from .errors import ChildFailed, DtqError, LeaseLost, WaitTimedOut
from .types import ChildEnd, Task

if TYPE_CHECKING:  # pragma: no cover
    from .worker import Worker

R = TypeVar("R")

__all__ = ["Context", "Cancelled", "Suspended", "LeaseDropped"]


class Cancelled(Exception):
    """Raised by ``ctx.check()`` once the task's cancellation was requested,
    its timeout passed or its lease was lost."""


class Suspended(BaseException):
    """The lease ended with the task suspended (a durable sleep, a wait for a
    signal, a child not ended yet). Raised by ctx.sleep/wait_for/child; let
    it propagate: the worker reports nothing, the task comes back when due."""


class LeaseDropped(BaseException):
    """The lease was lost (409 lease_lost) during a durable call: another
    worker has the task; the worker drops it without an outcome."""


class Context:
    """The lease of one running task, handed to its handler."""

    def __init__(self, transport: Transport, lease: str, task_json: Dict[str, Any],
                 on_event: Optional[Callable[..., None]] = None) -> None:
        self.lease = lease
        self._t = transport
        self._raw = task_json
        self._task: Optional[Task] = None
        self._cancel = threading.Event()
        self._emit = on_event
        self.lost = False
        """The lease was lost (another worker took the task over): stop."""
        self.timed_out = False
        """The task's timeout_seconds passed: the run fails whatever the handler returns."""
        self.ended = False
        """The lease ended (suspended, lost, timed out): nothing more is reported for it."""
        self._steps: Optional[Dict[str, Any]] = None

    # What the handler reads.

    @property
    def task(self) -> Task:
        """The whole task, as GET /api/v1/tasks/{id} shows it (built on first use)."""
        if self._task is None:
            self._task = Task.from_json(self._raw)
        return self._task

    @property
    def task_id(self) -> str:
        return str(self._raw.get("id", ""))

    @property
    def task_type(self) -> str:
        return str(self._raw.get("task_type", ""))

    @property
    def attempt(self) -> int:
        """This execution's attempt, from 1 (a resumed suspension keeps its attempt)."""
        return int(self._raw.get("attempt", 1))

    @property
    def cancelled(self) -> bool:
        """True once the task's cancellation was requested (seen at the lease's
        next extension), its timeout passed, or its lease was lost."""
        return self._cancel.is_set()

    def wait_cancelled(self, timeout: Optional[float] = None) -> bool:
        """Blocks until cancelled (True) or timeout seconds pass (False): a
        sleep that a cancellation cuts short."""
        return self._cancel.wait(timeout)

    def check(self) -> None:
        """Raises Cancelled once ``cancelled`` is true."""
        if self._cancel.is_set():
            raise Cancelled("timeout" if self.timed_out else "lease lost" if self.lost else "cancelled")

    # Set by the worker.

    def _set_cancelled(self) -> None:
        self._cancel.set()

    def _set_lost(self, on: str) -> None:
        if not self.lost:
            self.lost = True
            self.ended = True
            self._cancel.set()
            if self._emit:
                self._emit("lost", task=self.task_id, on=on)

    # Progress.

    def progress(self, fraction: float, note: Optional[str] = None) -> None:
        """Reports how far the task got (0-1) and a note: the task's
        ``progress`` while it runs, an event, the dashboard's bar. A report
        that cannot be delivered is dropped (progress is a hint)."""
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 <= fraction <= 1:
            raise ValueError("fraction: must be a number from 0 to 1, got %r" % (fraction,))
        if note is not None and not isinstance(note, str):
            raise TypeError("note: must be a string, got %r" % (note,))
        body: Dict[str, Any] = {"fraction": fraction}
        if note is not None:
            body["note"] = note
        try:
            status, ans = self._t.request("POST", self._path("progress"), body)
        except DtqError:
            return
        if isinstance(ans, LeaseLost):
            self._set_lost("progress")

    # Durable calls (docs/durable.md).

    def step(self, name: str, fn: Callable[[], R]) -> R:
        """Runs ``fn()`` once per task: its JSON result is recorded, and every
        later execution of the task gets the recorded result back without
        calling fn. Returns the result that stands (another execution's, if
        it recorded the step first). fn runs at least once, not exactly once:
        make its side effects idempotent (key them by ctx.task_id + name)."""
        _name(name, "step")
        if self._steps is None:
            ans = self._call("GET", "steps", None)
            self._steps = dict(ans.get("steps") or {})
        if name in self._steps:
            return self._steps[name]  # type: ignore[no-any-return]
        result = fn()
        ans = self._call("PUT", "steps/" + quote(name, "name"), {"result": result})
        self._steps[name] = ans.get("result")
        return ans.get("result")  # type: ignore[no-any-return]

    def sleep(self, name: str, seconds: float) -> None:
        """A durable sleep named ``name`` (unique in the task): returns once
        it is over; else the lease ends with the task SCHEDULED until then
        (raises Suspended, which must propagate) and the handler runs again
        from the top, this sleep then over."""
        _name(name, "name")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
            raise ValueError("seconds: must be a number >= 0, got %r" % (seconds,))
        self._over(self._call("POST", "sleep", {"step": name, "seconds": seconds}), "sleep", name)

    def wait_for(self, signal: str, timeout: float) -> Any:
        """Waits for the signal ``signal`` (Client.signal) at most timeout
        seconds: returns its payload; raises WaitTimedOut when none came in
        time; else (not there yet) the lease ends with the task waiting
        (raises Suspended) and the handler runs again once it comes."""
        _name(signal, "signal")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError("timeout: must be a number of seconds above 0, got %r" % (timeout,))
        ans = self._call("POST", "wait", {"signal": signal, "timeout_seconds": timeout})
        self._over(ans, "signal", signal)
        if ans.get("timed_out"):
            raise WaitTimedOut(signal)
        return ans.get("payload")

    def child(self, name: str, type: str, payload: Any = None, **options: Any) -> Any:
        """Submits a child task once per task (as step ``name``) and waits for
        it without holding the worker: returns its result once it SUCCEEDED,
        raises ChildFailed when it ended DEAD or CANCELLED, else suspends
        (Suspended). ``options`` are Client.submit's (queue, priority …)."""
        _name(name, "name")
        ans = self._call("POST", "child", {"step": name, "task": submission(type, payload, **options)})
        self._over(ans, "child", name)
        end = ChildEnd.from_json(ans.get("child") or {})
        if end.status != "SUCCEEDED":
            raise ChildFailed(end.task_id, end.status, end.error or "")
        return end.result

    # Helpers.

    def _path(self, what: str) -> str:
        return "/api/v1/leases/%s/%s" % (self.lease, what)

    def _call(self, method: str, what: str, body: Any) -> Dict[str, Any]:
        """A lease call; a lost lease raises LeaseDropped (the task is dropped)."""
        status, ans = self._t.request(method, self._path(what), body)
        if isinstance(ans, LeaseLost):
            self._set_lost(what.split("/", 1)[0])
            raise LeaseDropped("the lease was lost")
        if isinstance(ans, DtqError):
            raise ans
        return ans if isinstance(ans, dict) else {}

    def _over(self, ans: Dict[str, Any], kind: str, name: str) -> None:
        if not ans.get("over"):
            self.ended = True
            if self._emit:
                self._emit("suspended", task=self.task_id, kind=kind, name=name,
                           until=(ans.get("suspended") or {}).get("until"))
            raise Suspended("%s %s" % (kind, name))


def _name(v: Any, what: str) -> None:
    if not isinstance(v, str) or not v:
        raise ValueError("%s: must be a non-empty string, got %r" % (what, v))
