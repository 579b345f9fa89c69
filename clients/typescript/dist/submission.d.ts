import type { TaskStatus } from './types.js';
/** A task is unique among its queue's tasks of its type by key (else by payload), while in states. */
export interface UniqueOptions {
    /** At most 256 bytes; without it the payload is the key. */
    key?: string;
    /** The states in which a task holds the lock. Default QUEUED, SCHEDULED, RUNNING. */
    states?: TaskStatus[];
    /** The lock lasts per period of this many seconds (≥ 1). */
    periodSeconds?: number;
}
/**
 * A debounced submission: the submissions of one queue, task type and key that
 * come while their task is pending become that one task, due once the key has
 * been quiet for periodSeconds (and no later than maxWaitSeconds after the
 * first). A submission that joins the pending task answers it with `debounced`.
 */
export interface DebounceOptions {
    /** 1-256 bytes. */
    key: string;
    /** How long the key must be quiet before the task is due: 0.001 s - a year. */
    periodSeconds: number;
    /** Bounds the wait from the first submission (≥ periodSeconds); omitted or 0: no bound. */
    maxWaitSeconds?: number;
    /** Keep the pending task's payload instead of this submission's. Default false: the last payload wins. */
    keepFirst?: boolean;
}
/** The options of a task, wherever one is submitted (submit, submitMany, a workflow's task, a child). */
export interface TaskOptions {
    /** 0-9; a higher priority runs first. Default 5. */
    priority?: number;
    /** Attempts before the task is DEAD, 1-1000. Default 10. */
    maxAttempts?: number;
    /** Limit of one execution, 0.001-604800 s. Default 1800. */
    timeoutSeconds?: number;
}
/** The options of submit: every field of POST /api/v1/tasks. */
export interface SubmitOptions extends TaskOptions {
    /** Default "default". */
    queue?: string;
    /** Run no sooner than this many seconds from now (0 - a year). Exclusive with runAt. */
    delaySeconds?: number;
    /** Run no sooner than this time (a Date, an RFC 3339 string, or epoch milliseconds). Sent as delay_seconds. */
    runAt?: Date | string | number;
    /** Not created while another task holds its lock; `true` for the defaults. Exclusive with idempotencyKey. */
    unique?: UniqueOptions | true;
    /** The group (tenant) the task is served fairly among. */
    group?: string;
    /** Puts the task under the limits of this key besides its type's. */
    limitKey?: string;
    /** The tasks of one order key (in a queue) start one at a time, in submission order. Exclusive with unique. */
    orderKey?: string;
    /** Joins the pending task of its key instead of creating one. Exclusive with idempotencyKey, unique, orderKey, delaySeconds, runAt. */
    debounce?: DebounceOptions;
    /** Sent as Idempotency-Key (≤ 256 bytes): a repeat of the same submission returns the first task. submit only. */
    idempotencyKey?: string;
    /** A W3C trace context, sent as the traceparent header: the parent of the task's spans. submit only. */
    traceparent?: string;
}
/** One task of submitMany. */
export interface BatchItem extends Omit<SubmitOptions, 'idempotencyKey' | 'traceparent'> {
    type: string;
    payload?: unknown;
}
/** taskBody is the body of a task (type, payload, and the options any task takes). */
export declare function taskBody(where: string, type: unknown, payload: unknown, o: TaskOptions): Record<string, unknown>;
/** submissionBody is the JSON body of POST /api/v1/tasks (or one batch item, or a child's task). */
export declare function submissionBody(where: string, type: unknown, payload: unknown, o: SubmitOptions, allowed?: readonly string[]): Record<string, unknown>;
/** batchBody is one item of POST /api/v1/tasks/batch. */
export declare function batchBody(i: number, item: BatchItem): Record<string, unknown>;
/** submitHeaders are the headers of submit's options (Idempotency-Key, traceparent). */
export declare function submitHeaders(o: SubmitOptions): Record<string, string>;
