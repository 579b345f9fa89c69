import { type Transport } from './http.js';
import { type SubmitOptions } from './submission.js';
import { type Task } from './types.js';
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
export type WaitResult = {
    timedOut: false;
    payload: unknown;
} | {
    timedOut: true;
    payload?: undefined;
};
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
export declare class TaskContext {
    private readonly run;
    /** The task as leased (its payload is also the handler's first argument). */
    readonly task: Task;
    private steps;
    constructor(run: RunState, task: Task);
    /** The attempt this execution is (1 for the first; a durable resume keeps it). */
    get attempt(): number;
    /**
     * Aborted when the task's cancellation is requested, its timeout passes, its
     * lease is lost, or the worker's graceful stop ran out of time: pass it on
     * to fetch, timers and streams, or check it between pieces of work.
     */
    get signal(): AbortSignal;
    /** Whether the task's cancellation was requested (the signal is aborted then too). */
    get cancelled(): boolean;
    /**
     * progress reports how far the task got (0-1) with an optional note (≤ 1,024
     * bytes), shown on the task while it runs. A report that cannot be made is
     * dropped (progress is a hint); a lost lease aborts the signal.
     */
    progress(fraction: number, note?: string): Promise<void>;
    /**
     * step runs fn once per task: a step recorded by an earlier execution of the
     * task (a retry, a takeover, a durable resume) returns its recorded result
     * without calling fn. Otherwise fn's result (JSON) is recorded and returned
     * — as recorded: if another execution recorded the step first, that result.
     */
    step<T>(name: string, fn: () => T | Promise<T>): Promise<T>;
    /**
     * sleep is a durable sleep named name: the first time, the execution ends
     * (it throws Suspended: let it propagate) and the task runs again from the
     * top after `seconds`, when this same call returns at once. The worker's
     * slot is free meanwhile.
     */
    sleep(name: string, seconds: number): Promise<void>;
    /**
     * waitFor waits, durably, for the signal name (client.signal(taskId, name,
     * payload)), at most timeoutSeconds: it returns the signal's payload, or
     * timedOut. While it waits the execution ends (Suspended) and the task runs
     * again when the signal comes or the timeout passes.
     */
    waitFor(name: string, opts: {
        timeoutSeconds: number;
    }): Promise<WaitResult>;
    /**
     * child submits a task once per task (the step name keeps it from being
     * submitted again) and waits, durably, for its end: it returns how the child
     * ended; meanwhile the execution ends (Suspended).
     */
    child(step: string, type: string, payload?: unknown, opts?: SubmitOptions): Promise<ChildEnd>;
    /** recorded reads the task's recorded steps, once per execution. */
    private recorded;
    /**
     * call makes a call on the lease. A call the server could not take (no
     * connection, 503) is tried again — each of these calls is safe to repeat:
     * a step's first record stands, a sleep, wait or child is found by its name —
     * for up to the lease's time, unless the handler's signal aborts first (as a
     * Go handler's step record is retried until its context ends). A lost lease
     * aborts the signal and rethrows.
     */
    private call;
    private lose;
    private suspendOn;
    /** usable refuses calls on a lease that ended with a suspension or was lost. */
    private usable;
}
