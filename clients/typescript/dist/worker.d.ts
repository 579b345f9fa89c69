import { type ConnectionOptions } from './http.js';
import { TaskContext } from './context.js';
/**
 * A handler runs one task: it gets the task's payload and its context, and
 * returns the result (any JSON value; undefined is null) or throws —
 * Permanent (dead at once), RetryAfter (retry no sooner than its seconds), or
 * anything else (retried with the default backoff).
 */
export type Handler = (payload: any, ctx: TaskContext) => unknown;
export interface WorkerOptions extends ConnectionOptions {
    /** The queues to take tasks from, highest priority first. */
    queues: string[];
    /** Tasks run at once. Default 10. */
    concurrency?: number;
    /** The lease timeout: a task not extended for this long is taken over (seconds, fractions allowed). Default 30. */
    leaseSeconds?: number;
    /** The lease holder's name (the task's worker is http:<name>). Default <hostname>-<pid>. */
    name?: string;
    /** How long a graceful stop lets running handlers finish (seconds). Default 10. */
    graceSeconds?: number;
    /** run() stops gracefully on SIGTERM and SIGINT (a second one ends the grace period). Default true. */
    handleSignals?: boolean;
    /** The long poll: how long one lease call waits for a task (seconds, ≤ 20). Default 20. */
    pollSeconds?: number;
    /** Told of errors the worker recovers from (a failed poll, an unrecorded outcome). Default: console.error. */
    onError?: (err: unknown) => void;
    /**
     * Told of what the worker does, as the Python library's on_event: ready (it polls; fields worker, url),
     * leased (task, type, attempt), done and failed (task, status: the outcome recorded), lost (task, on),
     * cancel_seen, timeout, suspended (task), stopped (worker). Default: none.
     */
    onEvent?: (event: WorkerEvent, fields: Record<string, unknown>) => void;
}
/** The events of WorkerOptions.onEvent. */
export type WorkerEvent = 'ready' | 'leased' | 'done' | 'failed' | 'lost' | 'cancel_seen' | 'timeout' | 'suspended' | 'stopped';
/** Counts since the worker started. */
export interface WorkerStats {
    /** Tasks leased. */
    leased: number;
    /** Outcomes recorded: completions and failures. */
    completed: number;
    failed: number;
    /** Executions dropped because their lease was lost. */
    lost: number;
    /** Executions that ended suspended (durable sleep, wait, child). */
    suspended: number;
    /** Outcomes that could not be recorded before their lease ran out. */
    unrecorded: number;
    /** Lease calls made. */
    leaseCalls: number;
}
export declare class Worker {
    readonly name: string;
    readonly stats: WorkerStats;
    /** Resolves once run() made its first lease call (it polls for work). */
    readonly ready: Promise<void>;
    private readonly http;
    private readonly reporter;
    private readonly handlers;
    private types;
    private readonly queues;
    private readonly concurrency;
    private readonly leaseMs;
    private readonly leaseSeconds;
    private readonly graceMs;
    private readonly pollSeconds;
    private readonly handleSignals;
    private readonly onError;
    private readonly onEvent;
    private saidReady;
    private readonly active;
    private markReady;
    private running;
    private stopping;
    private poll;
    private readonly stopped;
    private readonly graceOver;
    private slotWaiter;
    private finished;
    constructor(opts: WorkerOptions);
    /** task registers the handler of a task type; the worker leases only the types it has handlers for. */
    task(type: string, handler: Handler): this;
    /** How many handlers run now. */
    get busy(): number;
    /**
     * run leases and runs tasks until stop() (or SIGTERM/SIGINT), then stops
     * gracefully: no more leases, running handlers get graceSeconds to finish
     * (those still running then are aborted and given back as a retryable
     * failure), every outcome is recorded, and run resolves. It rejects at once
     * on an error no retry mends (401, a refused lease request: bad queue name).
     */
    run(): Promise<void>;
    /** stop begins a graceful stop (see run) and resolves when run() does. */
    stop(): Promise<void>;
    private loopAndDrain;
    private beginStop;
    private installSignals;
    private leaseLoop;
    /** start runs a leased task's handler, with its lease's extension and the task's timeout. */
    private start;
    /** decide records run's outcome, unless it was decided already, its lease is lost or it suspended. */
    private decide;
    /** extend renews run's lease every quarter of the lease's time while the handler runs. */
    private extend;
    /** timeOut ends a task whose timeout passed: its signal aborts and it fails, retryably, with "timeout". */
    private timeOut;
    /** drain lets running handlers finish within the grace period, gives back the rest, records every outcome. */
    private drain;
    private recorded;
    private wake;
}
