// TaskContext: what a handler gets besides the payload — the task, an
// AbortSignal, progress, and the durable steps, sleeps, waits and children
// of docs/durable.md, each over the task's lease.

import { ConnectionError, LeaseLostError, UnavailableError, invalid } from './errors.js';
import { seg, type Transport } from './http.js';
import { Suspended } from './handler-errors.js';
import { submissionBody, type SubmitOptions } from './submission.js';
import { suspensionFromWire, type Task } from './types.js';
import { checkNumber, checkString } from './validate.js';

/** Why ctx.signal was aborted (its `reason` is a DtqError with one of these codes). */
export type AbortCode = 'cancelled' | 'timeout' | 'lease_lost' | 'stopping';

/** The end of an awaited child task. */
export interface ChildEnd {
  taskId: string;
  /** SUCCEEDED, DEAD or CANCELLED. */
  status: string;
  result?: unknown;
  error?: string;
}

/** The answer of a wait for a signal: its payload, or that the wait timed out. */
export type WaitResult = { timedOut: false; payload: unknown } | { timedOut: true; payload?: undefined };

/** The part of a running execution the context works on (implemented by the worker). */
export interface RunState {
  readonly token: string;
  readonly http: Transport;
  readonly controller: AbortController;
  /** The lease's time (ms): how long a call on it is retried while the server cannot be reached. */
  readonly leaseMs: number;
  cancelled: boolean;
  lost: boolean;
  suspended: boolean;
  /** abort ends the handler's signal with a reason (once). */
  abort(code: AbortCode, message: string): void;
  /** lose marks the lease lost (told once, as the worker's lost event, with the call that found it) and aborts the signal. */
  lose(on: string): void;
  /** suspend marks the execution suspended: the lease ended on the server; nothing is reported. */
  suspend(): void;
}

export class TaskContext {
  /** The task as leased (its payload is also the handler's first argument). */
  readonly task: Task;
  private steps: Promise<Map<string, unknown>> | null = null;

  constructor(private readonly run: RunState, task: Task) {
    this.task = task;
  }

  /** The attempt this execution is (1 for the first; a durable resume keeps it). */
  get attempt(): number {
    return this.task.attempt;
  }

  /**
   * Aborted when the task's cancellation is requested, its timeout passes, its
   * lease is lost, or the worker's graceful stop ran out of time: pass it on
   * to fetch, timers and streams, or check it between pieces of work.
   */
  get signal(): AbortSignal {
    return this.run.controller.signal;
  }

  /** Whether the task's cancellation was requested (the signal is aborted then too). */
  get cancelled(): boolean {
    return this.run.cancelled;
  }

  /**
   * progress reports how far the task got (0-1) with an optional note (≤ 1,024
   * bytes), shown on the task while it runs. A report that cannot be made is
   * dropped (progress is a hint); a lost lease aborts the signal.
   */
  async progress(fraction: number, note?: string): Promise<void> {
    checkNumber('fraction', fraction, 0);
    if (fraction > 1) throw invalid('fraction', `must be a number from 0 to 1 (got ${fraction})`);
    if (note !== undefined) checkString('note', note, { empty: true });
    this.usable();
    try {
      await this.run.http.request('POST', `/api/v1/leases/${seg(this.run.token)}/progress`, note === undefined ? { fraction } : { fraction, note });
    } catch (e) {
      if (e instanceof LeaseLostError) this.lose();
    }
  }

  /**
   * step runs fn once per task: a step recorded by an earlier execution of the
   * task (a retry, a takeover, a durable resume) returns its recorded result
   * without calling fn. Otherwise fn's result (JSON) is recorded and returned
   * — as recorded: if another execution recorded the step first, that result.
   */
  async step<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
    checkString('name', name);
    if (typeof fn !== 'function') throw invalid('fn', 'must be a function');
    this.usable();
    const steps = await this.recorded();
    if (steps.has(name)) return steps.get(name) as T;
    const result = await fn();
    this.usable();
    const a = await this.call<{ result: unknown }>('PUT', `steps/${seg(name)}`, { result: result === undefined ? null : result });
    steps.set(name, a.result);
    return a.result as T;
  }

  /**
   * sleep is a durable sleep named name: the first time, the execution ends
   * (it throws Suspended: let it propagate) and the task runs again from the
   * top after `seconds`, when this same call returns at once. The worker's
   * slot is free meanwhile.
   */
  async sleep(name: string, seconds: number): Promise<void> {
    checkString('name', name);
    checkNumber('seconds', seconds, 0);
    this.usable();
    const a = await this.call<Waited>('POST', 'sleep', { step: name, seconds });
    if (!a.over) this.suspendOn(a, `sleeping ${name}`);
  }

  /**
   * waitFor waits, durably, for the signal name (client.signal(taskId, name,
   * payload)), at most timeoutSeconds: it returns the signal's payload, or
   * timedOut. While it waits the execution ends (Suspended) and the task runs
   * again when the signal comes or the timeout passes.
   */
  async waitFor(name: string, opts: { timeoutSeconds: number }): Promise<WaitResult> {
    checkString('name', name);
    if (typeof opts !== 'object' || opts === null) throw invalid('timeoutSeconds', 'is required: waitFor(name, {timeoutSeconds})');
    checkNumber('timeoutSeconds', opts.timeoutSeconds, 0, { exclusive: true });
    this.usable();
    const a = await this.call<Waited>('POST', 'wait', { signal: name, timeout_seconds: opts.timeoutSeconds });
    if (!a.over) this.suspendOn(a, `waiting for signal ${name}`);
    return a.timed_out ? { timedOut: true } : { timedOut: false, payload: a.payload ?? null };
  }

  /**
   * child submits a task once per task (the step name keeps it from being
   * submitted again) and waits, durably, for its end: it returns how the child
   * ended; meanwhile the execution ends (Suspended).
   */
  async child(step: string, type: string, payload?: unknown, opts: SubmitOptions = {}): Promise<ChildEnd> {
    checkString('step', step);
    const task = submissionBody('', type, payload, opts,
      ['priority', 'maxAttempts', 'timeoutSeconds', 'queue', 'delaySeconds', 'runAt', 'unique', 'group', 'limitKey', 'orderKey']);
    this.usable();
    const a = await this.call<Waited>('POST', 'child', { step, task });
    if (!a.over || !a.child) this.suspendOn(a, `waiting for child ${step}`);
    const c = a.child!;
    const end: ChildEnd = { taskId: c.task_id, status: c.status };
    if ('result' in c) end.result = c.result;
    if (c.error !== undefined) end.error = c.error;
    return end;
  }

  /** recorded reads the task's recorded steps, once per execution. */
  private recorded(): Promise<Map<string, unknown>> {
    this.steps ??= this.call<{ steps: Record<string, unknown> | null }>('GET', 'steps')
      .then((a) => new Map(Object.entries(a.steps ?? {})));
    const p = this.steps;
    p.catch(() => { if (this.steps === p) this.steps = null; }); // a failed read is tried again by the next step
    return p;
  }

  /**
   * call makes a call on the lease. A call the server could not take (no
   * connection, 503) is tried again — each of these calls is safe to repeat:
   * a step's first record stands, a sleep, wait or child is found by its name —
   * for up to the lease's time, unless the handler's signal aborts first (as a
   * Go handler's step record is retried until its context ends). A lost lease
   * aborts the signal and rethrows.
   */
  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = `/api/v1/leases/${seg(this.run.token)}/${path}`;
    const giveUp = Date.now() + this.run.leaseMs;
    for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
      try {
        return (await this.run.http.request<T>(method, url, body)).body;
      } catch (e) {
        if (e instanceof LeaseLostError) this.lose();
        const again = e instanceof ConnectionError || e instanceof UnavailableError;
        if (!again || this.signal.aborted || Date.now() + delay > giveUp) throw e;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  private lose(): void {
    this.run.lose('handler');
  }

  private suspendOn(a: Waited, what: string): never {
    this.run.suspend();
    const until = a.suspended ? suspensionFromWire(a.suspended).until : undefined;
    throw new Suspended(`the task suspended, ${what}${until ? ' until ' + until.toISOString() : ''}: let this propagate`, until);
  }

  /** usable refuses calls on a lease that ended with a suspension or was lost. */
  private usable(): void {
    if (this.run.suspended) throw new Suspended('the task suspended already: this execution must end');
    if (this.run.lost) throw new LeaseLostError('lease_lost', 409, 'the lease is lost: this execution must end');
  }
}

interface Waited {
  over: boolean;
  suspended?: Record<string, unknown>;
  payload?: unknown;
  timed_out?: boolean;
  child?: { task_id: string; status: string; result?: unknown; error?: string };
}
