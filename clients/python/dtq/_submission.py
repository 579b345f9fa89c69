"""The body of a submission (POST /api/v1/tasks), built from Python arguments.

The library checks types here and names the field it refuses (``priority:
must be an int …``); ranges are the server's to check, so that the library
and the API refuse the same requests with the same words (the server's
``invalid_field`` becomes :class:`dtq.Invalid` with ``.field``).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence, Union

Json = Dict[str, Any]

# The keyword arguments a submission takes (submit, submit_many items, ctx.child).
SUBMIT_OPTIONS = ("payload", "queue", "priority", "delay", "run_at", "max_attempts", "timeout", "unique",
                  "unique_states", "unique_period", "group", "limit_key", "order_key", "debounce")


def _number(name: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError("%s: must be a number of seconds, got %r" % (name, v))
    return v


def _int(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("%s: must be an int, got %r" % (name, v))
    return v


def _str(name: str, v: Any) -> str:
    if not isinstance(v, str):
        raise TypeError("%s: must be a string, got %r" % (name, v))
    return v


@dataclass(frozen=True)
class Debounce:
    """A submission's debounce (the API's ``debounce``; docs/api.md): the
    submissions of one queue, task type and ``key`` that come while their task
    is pending become that one task, due once the key has been quiet for
    ``period`` seconds, and no later than ``max_wait`` seconds after the first
    (None: no bound). A joining submission gives the task its payload unless
    ``keep_first``. A dict with these keys works too."""
    key: str
    period: float
    max_wait: Optional[float] = None
    keep_first: bool = False


_DEBOUNCE_KEYS = ("key", "period", "max_wait", "keep_first")


def debounce_body(d: Union[Debounce, Dict[str, Any]]) -> Json:
    """The API's debounce object of a Debounce (or a dict of its fields)."""
    if isinstance(d, dict):
        unknown = sorted(set(d) - set(_DEBOUNCE_KEYS), key=str)
        if unknown:
            raise TypeError("debounce: unknown key(s) %s (allowed: %s)"
                            % (", ".join(map(str, unknown)), ", ".join(_DEBOUNCE_KEYS)))
        if "key" not in d or "period" not in d:
            raise TypeError("debounce: needs key and period, got %r" % (d,))
        d = Debounce(**d)
    elif not isinstance(d, Debounce):
        raise TypeError("debounce: must be a dtq.Debounce or a dict of its fields, got %r" % (d,))
    b: Json = {"key": _str("debounce.key", d.key), "period_seconds": _number("debounce.period", d.period)}
    if d.max_wait is not None:
        b["max_wait_seconds"] = _number("debounce.max_wait", d.max_wait)
    if not isinstance(d.keep_first, bool):
        raise TypeError("debounce.keep_first: must be a bool, got %r" % (d.keep_first,))
    if d.keep_first:
        b["keep_first"] = True
    return b


def seconds_until(run_at: Union[_dt.datetime, float], now: Optional[_dt.datetime] = None) -> float:
    """Seconds from now to run_at (a datetime, naive = UTC, or a Unix time); 0 if past."""
    if isinstance(run_at, _dt.datetime):
        if run_at.tzinfo is None:
            run_at = run_at.replace(tzinfo=_dt.timezone.utc)
        now = now or _dt.datetime.now(_dt.timezone.utc)
        return max(0.0, (run_at - now).total_seconds())
    if isinstance(run_at, bool) or not isinstance(run_at, (int, float)):
        raise TypeError("run_at: must be a datetime or a Unix time, got %r" % (run_at,))
    import time
    return max(0.0, float(run_at) - time.time())


def submission(task_type: str, payload: Any = None, *, queue: Optional[str] = None,
               priority: Optional[int] = None, delay: Optional[float] = None,
               run_at: Union[_dt.datetime, float, None] = None, max_attempts: Optional[int] = None,
               timeout: Optional[float] = None, unique: Union[bool, str, None] = None,
               unique_states: Optional[Sequence[str]] = None, unique_period: Optional[float] = None,
               group: Optional[str] = None, limit_key: Optional[str] = None, order_key: Optional[str] = None,
               debounce: Union[Debounce, Dict[str, Any], None] = None) -> Json:
    """The JSON body of a submission; see Client.submit for the arguments."""
    if not isinstance(task_type, str) or not task_type:
        raise ValueError("task_type: must be a non-empty string, got %r" % (task_type,))
    body: Json = {"task_type": task_type}
    if payload is not None:
        body["payload"] = payload
    if queue is not None:
        body["queue"] = _str("queue", queue)
    if priority is not None:
        body["priority"] = _int("priority", priority)
    if delay is not None and run_at is not None:
        raise ValueError("delay and run_at: give one or the other")
    if delay is not None:
        body["delay_seconds"] = _number("delay", delay)
    if run_at is not None:
        body["delay_seconds"] = round(seconds_until(run_at), 3)
    if max_attempts is not None:
        body["max_attempts"] = _int("max_attempts", max_attempts)
    if timeout is not None:
        body["timeout_seconds"] = _number("timeout", timeout)
    if unique is not None and unique is not False:
        u: Json = {}
        if isinstance(unique, str):
            u["key"] = unique
        elif unique is not True:
            raise TypeError("unique: must be True (by payload) or a key string, got %r" % (unique,))
        if unique_states is not None:
            if isinstance(unique_states, str) or not all(isinstance(s, str) for s in unique_states):
                raise TypeError("unique_states: must be a list of statuses, got %r" % (unique_states,))
            u["states"] = list(unique_states)
        if unique_period is not None:
            u["period_seconds"] = _number("unique_period", unique_period)
        body["unique"] = u
    elif unique_states is not None or unique_period is not None:
        raise ValueError("unique_states and unique_period: need unique=True or unique=<key>")
    if group is not None:
        body["group"] = _str("group", group)
    if limit_key is not None:
        body["limit_key"] = _str("limit_key", limit_key)
    if order_key is not None:
        body["order_key"] = _str("order_key", order_key)
    if debounce is not None:
        body["debounce"] = debounce_body(debounce)
    return body


def submission_of(item: Any, index: int) -> Json:
    """The body of one submit_many item: a dict with submit's argument names
    (``type`` or ``task_type``, ``payload``, ``queue`` …)."""
    if not isinstance(item, dict):
        raise TypeError("tasks[%d]: must be a dict of submit()'s arguments, got %r" % (index, item))
    args = dict(item)
    task_type = args.pop("type", None) or args.pop("task_type", None)
    unknown = set(args) - set(SUBMIT_OPTIONS)
    if unknown:
        raise TypeError("tasks[%d]: unknown argument(s) %s" % (index, ", ".join(sorted(unknown))))
    try:
        return submission(task_type, **args)
    except (TypeError, ValueError) as e:
        raise type(e)("tasks[%d].%s" % (index, e)) from None
