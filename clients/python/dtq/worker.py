"""dtq.Worker: runs task handlers on tasks leased over the HTTP API.

    worker = dtq.Worker(queues=["images"], concurrency=8)

    @worker.task("resize")
    def resize(payload, ctx):
        ctx.progress(0.5, "half")
        return {"ok": True}

    worker.run()   # blocks; SIGTERM or SIGINT stops it gracefully

How it runs (docs/workers.md is the protocol):

- one thread leases (POST /api/v1/leases) as many tasks as it has free
  slots (up to 100), in a long poll that answers as soon as a task is there;
- ``concurrency`` reused threads run the handlers;
- a keeper thread extends a task's lease once it has run lease_seconds/4
  (short tasks are never extended), sets ``ctx.cancelled`` when the answer
  says the task's cancellation was requested, and enforces the task's
  timeout_seconds (ctx cancelled, the run fails retryably at once);
- a reporter thread sends the outcomes in batches (POST
  /api/v1/leases/outcomes): whatever finished while one report was in flight
  goes in the next, retried while the server cannot be reached (within the
  lease time); a 409 lease_lost drops the task.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import queue as _queue
import signal as _signal
import socket
import threading
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple

from ._http import Abort, Transport
from .context import Context, LeaseDropped, Suspended
from .errors import BadRequest, DtqError, Forbidden, ForbiddenOrigin, NotFound, Permanent, RetryAfter, Unauthorized
from .version import LIBRARY

log = logging.getLogger("dtq.worker")

Handler = Callable[[Any, Context], Any]
EventSink = Callable[..., None]

__all__ = ["Worker"]

MAX_LEASE_BATCH = 100  # the API's bound on max, and on an outcomes batch
MAX_POLL_SECONDS = 20.0  # the API's bound on wait_seconds
# A report's body stays under the server's body cap (--max-body-bytes, 2 MiB
# by default): a large result goes in a report of its own.
MAX_REPORT_BYTES = 1 << 20
# On stop, how long a long poll in flight may still deliver an answer the
# server is already sending (tasks it leased just before the stop).
ABORT_POLL_AFTER = 0.1


class _Run:
    """One leased task while this worker holds it."""

    __slots__ = ("token", "task", "ctx", "last_extend", "timeout_at")

    def __init__(self, token: str, task: Dict[str, Any], ctx: Context, now: float) -> None:
        self.token = token
        self.task = task
        self.ctx = ctx
        self.last_extend = now
        t = task.get("timeout_seconds")
        self.timeout_at = now + float(t) if isinstance(t, (int, float)) and t > 0 else None


class _Outcome:
    """An outcome waiting to be reported: the item of the batch route, as
    JSON, and what it says (for the per-lease routes and the events)."""

    __slots__ = ("token", "task_id", "body", "encoded", "give_up_at")

    def __init__(self, token: str, task_id: str, body: Dict[str, Any], give_up_at: float) -> None:
        self.token = token
        self.task_id = task_id
        self.body = body
        item = dict(body)
        item["lease"] = token
        self.encoded = json.dumps(item, separators=(",", ":"), allow_nan=False)
        self.give_up_at = give_up_at

    @property
    def verb(self) -> str:
        return "complete" if "result" in self.body else "fail"


class _Pool:
    """``size`` reused daemon threads running submitted calls (daemons, so a
    handler that never returns cannot keep the process from exiting after
    the grace period, as ThreadPoolExecutor's joined threads would)."""

    def __init__(self, size: int, name: str) -> None:
        self._q: "_queue.SimpleQueue[Optional[Tuple[Callable[..., None], Any]]]" = _queue.SimpleQueue()
        self._threads = [threading.Thread(target=self._loop, name="%s-%d" % (name, i), daemon=True)
                         for i in range(size)]
        for t in self._threads:
            t.start()

    def submit(self, fn: Callable[..., None], arg: Any) -> None:
        self._q.put((fn, arg))

    def _loop(self) -> None:
        while True:
            item = self._q.get()
            if item is None:
                return
            fn, arg = item
            try:
                fn(arg)
            except BaseException:  # noqa: BLE001 — the thread must live on
                log.exception("dtq worker: internal error running a task")

    def shutdown(self) -> None:
        for _ in self._threads:
            self._q.put(None)


class Worker:
    """Leases tasks of ``queues`` (highest priority first) and runs the
    handlers registered with ``@worker.task(type)``.

    url / api_key: as Client (default $DTQ_API_URL / $DTQ_API_KEY).
    concurrency: handlers run at once (threads); also the most tasks leased.
    lease_seconds: a lease's timeout unless extended (give every process of a
      queue the same one: a lease idle longer is taken over).
    name: the holder's name (default py-<host>-<pid>), shown as http:<name>.
    grace_seconds: on stop, how long running handlers may take to finish;
      the tasks of those still running then are given back (they run again
      elsewhere once their lease expires).
    poll_seconds: the long poll's wait (0-20).
    on_event: called as on_event(event, **fields) for ready, leased, done,
      failed, lost, cancel_seen, timeout, suspended, abandoned, error,
      stopped (the conformance worker prints them); default: none.
    """

    def __init__(self, url: Optional[str] = None, queues: Sequence[str] = ("default",), concurrency: int = 8,
                 lease_seconds: float = 30.0, name: Optional[str] = None, grace_seconds: float = 30.0, *,
                 api_key: Optional[str] = None, poll_seconds: float = MAX_POLL_SECONDS,
                 on_event: Optional[EventSink] = None, timeout: float = 30.0) -> None:
        if isinstance(queues, str) or not queues or not all(isinstance(q, str) and q for q in queues):
            raise ValueError("queues: must be a non-empty list of queue names, got %r" % (queues,))
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or not 1 <= concurrency <= 100000:
            raise ValueError("concurrency: must be an int from 1 to 100000, got %r" % (concurrency,))
        for what, v, low in (("lease_seconds", lease_seconds, 0.0), ("grace_seconds", grace_seconds, -1.0)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= low:
                raise ValueError("%s: must be a number of seconds %s, got %r" % (
                    what, "above 0" if low == 0 else ">= 0", v))
        if isinstance(poll_seconds, bool) or not isinstance(poll_seconds, (int, float)) \
                or not 0 <= poll_seconds <= MAX_POLL_SECONDS:
            raise ValueError("poll_seconds: must be a number from 0 to 20, got %r" % (poll_seconds,))
        if name is not None and (not isinstance(name, str) or not name or any(c in name for c in "|\t\n\r")):
            raise ValueError("name: must be a non-empty string without |, tabs or newlines, got %r" % (name,))
        self.queues = list(queues)
        self.concurrency = concurrency
        self.lease_seconds = float(lease_seconds)
        self.grace_seconds = float(grace_seconds)
        self.poll_seconds = float(poll_seconds)
        self.name = name or "py-%s-%d" % (socket.gethostname(), os.getpid())
        self._t = Transport(url, api_key, timeout, user_agent=LIBRARY)
        self._emit_fn = on_event
        self._handlers: Dict[str, Handler] = {}
        self._lock = threading.Lock()
        self._freed = threading.Condition(self._lock)  # a slot freed, or stopping
        self._running: Dict[str, _Run] = {}  # by token
        self._busy = 0  # slots taken: handlers not returned yet
        self._stopping = False
        self._stop_at = 0.0
        self._abort = Abort()
        self._batch_route = True  # until the server says it has no /leases/outcomes
        self._outbox: Deque[_Outcome] = deque()
        self._reporting = 0  # outcomes taken from the outbox and not answered yet
        self._report_cond = threading.Condition()
        self._threads_stop = threading.Event()
        # Leasing waits while this many outcomes wait to be reported: when
        # reports are slower than the handlers, leases would otherwise pile
        # up unreported until they expire (and their tasks ran twice).
        self._backlog_limit = 2 * max(concurrency, MAX_LEASE_BATCH)

    @property
    def url(self) -> str:
        return self._t.url

    # Registration.

    def task(self, type: str) -> Callable[[Handler], Handler]:
        """Decorator: registers fn(payload, ctx) as the handler of task type
        ``type``. It returns the task's result (any JSON value) or raises:
        dtq.Permanent (DEAD at once), dtq.RetryAfter(seconds) (retried no
        sooner), anything else (retried with backoff). An ``async def``
        handler runs with asyncio.run on its pool thread (ctx's calls block
        its loop: wrap them in asyncio.to_thread where that matters)."""
        def register(fn: Handler) -> Handler:
            self.register(type, fn)
            return fn
        return register

    def register(self, type: str, fn: Handler) -> None:
        """Registers fn as the handler of task type ``type`` (as @task does)."""
        if not isinstance(type, str) or not type:
            raise ValueError("type: must be a non-empty string, got %r" % (type,))
        if not callable(fn):
            raise TypeError("fn: the handler of %r must be callable" % type)
        self._handlers[type] = fn

    # Running.

    def run(self) -> None:
        """Runs until stop() (or SIGTERM/SIGINT when called on the main
        thread), then stops gracefully: no more leases, running handlers
        get grace_seconds to finish, every outcome is reported; returns."""
        if not self._handlers:
            raise ValueError("no handlers: register one with @worker.task(type) before run()")
        restore = self._install_signals()
        self._threads_stop.clear()
        pool = _Pool(self.concurrency, "dtq-handler")
        keeper = threading.Thread(target=self._keep, name="dtq-keeper", daemon=True)
        reporter = threading.Thread(target=self._report_loop, name="dtq-reporter", daemon=True)
        keeper.start()
        reporter.start()
        failure: Optional[BaseException] = None
        try:
            self._emit("ready", worker=self.name, url=self.url)
            self._lease_loop(pool)
        except BaseException as e:  # noqa: BLE001 — stop gracefully, then raise it
            failure = e
            self._stopping = True
        finally:
            self._drain()
            self._threads_stop.set()
            with self._report_cond:
                self._report_cond.notify_all()
            reporter.join(timeout=self.lease_seconds + 5)
            keeper.join(timeout=5)
            pool.shutdown()
            self._t.close()
            restore()
            self._stopping = False  # run() may be called again (a stop() before run() makes it return at once)
            self._abort = Abort()
            self._emit("stopped", worker=self.name)
        if failure is not None and not isinstance(failure, KeyboardInterrupt):
            raise failure

    def stop(self) -> None:
        """Asks run() to stop gracefully; returns at once. Safe from any
        thread and from a signal handler (it takes no lock).

        The long poll in flight is aborted by the keeper thread a moment
        later (ABORT_POLL_AFTER) unless its answer has begun to arrive: at
        once, it could cut off an answer holding tasks the server leased
        just before the stop, which would then wait out their lease."""
        self._stop_at = time.monotonic()
        self._stopping = True

    def _install_signals(self) -> Callable[[], None]:
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        previous = {}
        for sig in (_signal.SIGTERM, _signal.SIGINT):
            previous[sig] = _signal.signal(sig, lambda *_: self.stop())

        def restore() -> None:
            for s, h in previous.items():
                _signal.signal(s, h)
        return restore

    def _lease_loop(self, pool: _Pool) -> None:
        backoff = 0.0
        types = sorted(self._handlers)
        while not self._stopping:
            free = self._wait_free()
            if free <= 0:
                continue
            body = {"worker": self.name, "queues": self.queues, "task_types": types,
                    "max": min(free, MAX_LEASE_BATCH), "wait_seconds": self.poll_seconds,
                    "lease_seconds": self.lease_seconds, "library": LIBRARY,
                    "concurrency": self.concurrency, "busy": self._busy}
            self._abort = Abort()
            if self._stopping:
                return
            try:
                status, ans = self._t.request("POST", "/api/v1/leases", body, abort=self._abort,
                                              timeout=self.poll_seconds + self._t.timeout)
            except DtqError as e:
                if self._stopping:
                    return
                backoff = min(max(backoff * 2, 0.2), 5.0)
                self._emit("error", on="lease", error=str(e))
                self._pause(backoff)
                continue
            if isinstance(ans, DtqError):
                if isinstance(ans, (BadRequest, Unauthorized, Forbidden, ForbiddenOrigin, NotFound)):
                    raise ans  # the worker's own configuration is wrong: retrying cannot help
                backoff = min(max(backoff * 2, 0.2), 5.0)
                self._emit("error", on="lease", status=status, error=str(ans))
                self._pause(backoff)
                continue
            backoff = 0.0
            now = time.monotonic()
            for lease in ans.get("leases") or ():
                task = lease["task"]
                ctx = Context(self._t, lease["lease"], task, self._emit_fn and self._emit)
                run = _Run(lease["lease"], task, ctx, now)
                with self._lock:
                    self._running[run.token] = run
                    self._busy += 1
                if self._emit_fn:
                    self._emit("leased", task=task.get("id"), type=task.get("task_type"),
                               attempt=task.get("attempt"))
                pool.submit(self._execute, run)

    def _wait_free(self) -> int:
        """Waits for a free slot; then, while most slots are taken, a few
        milliseconds more for others to free (a lease of 1 task per call
        costs a round trip per task). Returns the free slots."""
        with self._lock:
            while (self.concurrency - self._busy <= 0 or self._backlog() >= self._backlog_limit) \
                    and not self._stopping:
                self._freed.wait(0.1)
            if self._stopping:
                return 0
            want = max(1, self.concurrency // 2)
            deadline = time.monotonic() + 0.005
            while self.concurrency - self._busy < want and not self._stopping:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._freed.wait(left)
            return self.concurrency - self._busy

    def _backlog(self) -> int:
        """Outcomes not reported yet (read without their lock: a hint)."""
        return len(self._outbox) + self._reporting

    def _pause(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while not self._stopping and time.monotonic() < end:
            time.sleep(min(0.05, end - time.monotonic()))

    # A task's execution, on a pool thread.

    def _execute(self, run: _Run) -> None:
        ctx = run.ctx
        body: Optional[Dict[str, Any]] = None
        out: Optional[_Outcome] = None
        fn = self._handlers.get(ctx.task_type)
        try:
            if fn is None:
                raise Permanent("no handler for task type %r in this worker" % ctx.task_type)
            result = fn(run.task.get("payload"), ctx)
            if asyncio.iscoroutine(result):
                # An async def handler: run on an event loop of this pool thread's own.
                result = asyncio.run(result)
            body = {"result": result}
            out = self._outcome(run, body)  # a result that cannot be sent fails here, not its batch
        except (Suspended, LeaseDropped):
            body = None
        except Permanent as e:
            body = {"error": _text(e), "class": "permanent"}
        except RetryAfter as e:
            body = {"error": _text(e), "class": "retryable", "retry_after_seconds": e.seconds}
        except (TypeError, ValueError) as e:
            if body is not None:  # the result was not JSON
                body = {"error": "the handler's result is not JSON-encodable: %s" % e, "class": "permanent"}
            else:
                body = {"error": error_text(e), "class": "retryable"}
        except BaseException as e:  # noqa: BLE001 — any other failure is retried
            body = {"error": error_text(e), "class": "retryable"}
        finally:
            with self._lock:
                self._running.pop(run.token, None)
                self._busy -= 1
                self._freed.notify()
                # Not when suspended, lost, timed out (reported already) or abandoned.
                report = body is not None and not ctx.ended
                ctx.ended = True
        if report and body is not None:
            if out is None or out.body is not body:  # a failure: its outcome is not encoded yet
                out = self._outcome(run, body)
            self._queue(out)

    def _outcome(self, run: _Run, body: Dict[str, Any]) -> _Outcome:
        """The outcome to report (encoded now: raises if body is not JSON)."""
        return _Outcome(run.token, run.ctx.task_id, body, time.monotonic() + self.lease_seconds)

    def _queue(self, out: _Outcome) -> None:
        with self._report_cond:
            self._outbox.append(out)
            self._report_cond.notify()

    # The keeper: extensions and timeouts.

    def _keep(self) -> None:
        every = self.lease_seconds / 4.0
        tick = min(0.1, every / 2.0)
        while not self._threads_stop.wait(tick):
            now = time.monotonic()
            if self._stopping and now - self._stop_at >= ABORT_POLL_AFTER:
                self._abort.abort_if_idle()  # no task leased after the stop
            with self._lock:
                runs = list(self._running.values())
            for run in runs:
                ctx = run.ctx
                if ctx.ended:
                    continue
                if run.timeout_at is not None and now >= run.timeout_at:
                    self._time_out(run)
                elif now - run.last_extend >= every:
                    self._extend(run)

    def _time_out(self, run: _Run) -> None:
        ctx = run.ctx
        with self._lock:
            if ctx.ended:
                return  # the handler returned meanwhile: its outcome stands
            ctx.timed_out = True
            ctx.ended = True
        ctx._set_cancelled()
        secs = run.task.get("timeout_seconds")
        self._emit("timeout", task=ctx.task_id)
        self._queue(self._outcome(run, {"error": "timeout: the task ran past its timeout of %s s" % secs,
                                        "class": "retryable"}))

    def _extend(self, run: _Run) -> None:
        ctx = run.ctx
        try:
            status, ans = self._t.request("POST", "/api/v1/leases/%s/extend" % run.token,
                                          timeout=max(1.0, self.lease_seconds / 4))
        except DtqError as e:
            self._emit("error", on="extend", task=ctx.task_id, error=str(e))
            # Tried again in a quarter of the interval (not at every tick:
            # an unreachable server would get a burst per running task).
            every = self.lease_seconds / 4.0
            run.last_extend = time.monotonic() - every * 0.75
            return
        if isinstance(ans, DtqError):
            if ans.code == "lease_lost":
                ctx._set_lost("extend")
            else:  # 503 …: as for an unreachable server
                self._emit("error", on="extend", task=ctx.task_id, error=str(ans))
                run.last_extend = time.monotonic() - self.lease_seconds / 4.0 * 0.75
            return
        run.last_extend = time.monotonic()
        if ans.get("cancel_requested") and not ctx.cancelled:
            ctx._set_cancelled()
            self._emit("cancel_seen", task=ctx.task_id)

    # The reporter: outcomes in batches.

    def _report_loop(self) -> None:
        pending: List[_Outcome] = []
        delay = 0.0
        while True:
            with self._report_cond:
                while not self._outbox and not pending and not self._threads_stop.is_set():
                    self._report_cond.wait()
                size = sum(len(o.encoded) for o in pending)
                while self._outbox and len(pending) < MAX_LEASE_BATCH and (
                        not pending or size + len(self._outbox[0].encoded) <= MAX_REPORT_BYTES):
                    o = self._outbox.popleft()
                    pending.append(o)
                    size += len(o.encoded)
                self._reporting = len(pending)
            if not pending:
                return  # stopping, nothing left
            if delay:
                time.sleep(delay)
            pending = self._send(pending)
            if pending:
                now = time.monotonic()
                for o in [o for o in pending if o.give_up_at <= now]:
                    self._emit("error", on=o.verb, task=o.task_id,
                               error="gave up reporting: the lease time passed with the server unreachable")
                pending = [o for o in pending if o.give_up_at > now]
                delay = min(max(delay * 2, 0.1), 1.0)
            else:
                delay = 0.0
            with self._report_cond:
                self._reporting = len(pending)
                self._report_cond.notify_all()
            with self._lock:
                self._freed.notify_all()  # the backlog shrank: leasing may go on

    def _send(self, batch: List[_Outcome]) -> List[_Outcome]:
        """Reports batch; returns the outcomes to try again (the server could
        not be reached or was unavailable)."""
        if not self._batch_route:
            return [o for o in batch if not self._send_one(o)]
        raw = ('{"outcomes":[' + ",".join(o.encoded for o in batch) + "]}").encode()
        try:
            status, ans = self._t.request("POST", "/api/v1/leases/outcomes", raw_body=raw)
        except DtqError as e:
            self._emit("error", on="outcomes", error=str(e))
            return batch
        if isinstance(ans, NotFound) or status == 405:
            log.info("dtq worker: the server has no POST /api/v1/leases/outcomes; reporting lease by lease")
            self._batch_route = False
            return [o for o in batch if not self._send_one(o)]
        if isinstance(ans, DtqError):
            self._emit("error", on="outcomes", status=status, error=str(ans))
            if status >= 500 or status == 429:
                return batch
            return [o for o in batch if not self._send_one(o)]  # refused as a whole: one by one
        again: List[_Outcome] = []
        for o, r in zip(batch, ans.get("outcomes") or ()):
            err = r.get("error")
            if not err:
                self._emit("done" if o.verb == "complete" else "failed", task=o.task_id, status=r.get("status"))
            elif err.get("code") == "lease_lost":
                self._emit("lost", task=o.task_id, on=o.verb)
            elif o.verb == "complete":
                # The result was refused (too large …): the task fails instead.
                again.append(_Outcome(o.token, o.task_id, {"error": "the result was refused: %s" % err.get("message"),
                                                          "class": "permanent"}, o.give_up_at))
            else:
                self._emit("error", on="fail", task=o.task_id, error=str(err.get("message")))
        return again

    def _send_one(self, o: _Outcome) -> bool:
        """Reports one outcome by its lease's route; False to try again."""
        try:
            status, ans = self._t.request("POST", "/api/v1/leases/%s/%s" % (o.token, o.verb), o.body)
        except DtqError as e:
            self._emit("error", on=o.verb, task=o.task_id, error=str(e))
            return False
        if not isinstance(ans, DtqError):
            self._emit("done" if o.verb == "complete" else "failed", task=o.task_id, status=ans.get("status"))
            return True
        if ans.code == "lease_lost":
            self._emit("lost", task=o.task_id, on=o.verb)
            return True
        self._emit("error", on=o.verb, task=o.task_id, status=status, error=str(ans))
        if status >= 500 or status == 429:
            return False
        if o.verb == "complete":  # the result was refused (too large …): the task fails instead
            return self._send_one(_Outcome(o.token, o.task_id, {"error": "the result was refused: %s" % ans.message,
                                                                "class": "permanent"}, o.give_up_at))
        return True

    # The graceful stop.

    def _drain(self) -> None:
        """Waits (grace_seconds) for running handlers, gives back the tasks of
        those still running, then waits for every outcome to be reported."""
        end = time.monotonic() + self.grace_seconds
        with self._lock:
            while self._busy > 0 and time.monotonic() < end:
                self._freed.wait(min(0.05, max(0.0, end - time.monotonic())))
            left = [r for r in self._running.values() if not r.ctx.ended]
            for run in left:
                run.ctx.ended = True
        for run in left:
            run.ctx._set_cancelled()
            self._emit("abandoned", task=run.ctx.task_id)
        end = time.monotonic() + self.lease_seconds
        with self._report_cond:
            while (self._outbox or self._reporting) and time.monotonic() < end:
                self._report_cond.wait(0.05)

    def _emit(self, event: str, **fields: Any) -> None:
        if event == "error":
            log.warning("dtq worker: %s", fields)
        if self._emit_fn is not None:
            try:
                self._emit_fn(event, **fields)
            except Exception:  # noqa: BLE001 — a failing sink must not stop the worker
                log.exception("dtq worker: on_event failed")


def _text(e: BaseException) -> str:
    return str(e) or type(e).__name__


def error_text(e: BaseException) -> str:
    """The error recorded for a failed run: the exception's message, with its
    type in front for Python's own types other than Exception and
    RuntimeError (KeyError('x') says "KeyError: 'x'", RuntimeError("boom")
    and an exception class of the program's say "boom")."""
    msg = str(e)
    t = type(e)
    if not msg:
        return t.__name__
    if t.__module__ == "builtins" and t not in (Exception, RuntimeError):
        return "%s: %s" % (t.__name__, msg)
    return msg
