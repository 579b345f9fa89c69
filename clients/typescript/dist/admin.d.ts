import { type Transport } from './http.js';
import { type TaskOptions } from './submission.js';
import { type DeadLetterPage, type DeletedQueue, type QueueStats, type RedriveResult, type Schedule, type Task } from './types.js';
/** A schedule's definition (PUT /api/v1/schedules/{queue}/{name}). */
export interface ScheduleDefinition extends TaskOptions {
    /** A cron expression (5 fields, or 6 with seconds; @every 1h, @daily …). */
    cron: string;
    /** The task type each tick submits. */
    type: string;
    payload?: unknown;
    /** An IANA time zone. Default UTC. */
    timeZone?: string;
    /** skip (default) or catch_up: what to do with ticks missed while nothing ran. */
    missed?: 'skip' | 'catch_up';
    catchUpMax?: number;
    paused?: boolean;
}
export declare class Schedules {
    private readonly http;
    constructor(http: Transport);
    /** put creates or replaces the schedule name of queue; answers it. */
    put(queue: string, name: string, def: ScheduleDefinition): Promise<Schedule>;
    get(queue: string, name: string): Promise<Schedule>;
    /** delete removes the schedule (the tasks it created stay); answers its name. */
    delete(queue: string, name: string): Promise<string>;
    pause(queue: string, name: string): Promise<Schedule>;
    resume(queue: string, name: string): Promise<Schedule>;
    /** list lists the schedules of queue, or of every queue. */
    list(queue?: string): Promise<Schedule[]>;
}
/** The filters of a redrive (POST /api/v1/dlq/redrive). */
export interface RedriveOptions {
    queue?: string;
    /** The task type, exactly. */
    type?: string;
    /** A part of the reason, any letter case. */
    errorContains?: string;
    deadAfter?: Date | string;
    deadBefore?: Date | string;
    /** Count only; change nothing. */
    dryRun?: boolean;
    /** At most this many (default 1,000; at most 10,000). */
    limit?: number;
    /** At most this many per second (default 100). */
    ratePerSecond?: number;
}
export declare class DeadLetters {
    private readonly http;
    constructor(http: Transport);
    /** list reads a page of a queue's dead letters, newest first. */
    list(opts?: {
        queue?: string;
        limit?: number;
        cursor?: string;
    }): Promise<DeadLetterPage>;
    /** requeue puts a dead task back to QUEUED, attempts reset; NotDeadError if it is not a dead letter. */
    requeue(id: string): Promise<Task>;
    /** requeueAll requeues every dead letter of queue (or of every queue); answers how many. */
    requeueAll(queue?: string): Promise<number>;
    /** redrive requeues the dead letters matching every given filter, oldest first; call again while `more`. */
    redrive(opts?: RedriveOptions): Promise<RedriveResult>;
    /** discard removes a dead letter from its stream (the task stays DEAD until it expires). */
    discard(id: string): Promise<void>;
    /** purge discards every dead letter of queue (or of every queue); answers how many. */
    purge(queue?: string): Promise<number>;
}
export declare class Queues {
    private readonly http;
    constructor(http: Transport);
    /** list answers every queue that exists, with its counts. */
    list(): Promise<QueueStats[]>;
    /** get answers a queue's counts and totals; NotFoundError for a queue that does not exist. */
    get(name: string): Promise<QueueStats>;
    /** pause: workers stop starting its tasks (running ones finish; submissions are accepted). */
    pause(name: string): Promise<QueueStats>;
    resume(name: string): Promise<QueueStats>;
    /** delete deletes a queue and everything of it; QueueNotEmptyError unless it is empty or force. */
    delete(name: string, opts?: {
        force?: boolean;
    }): Promise<DeletedQueue>;
}
