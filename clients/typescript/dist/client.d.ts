import { DtqError } from './errors.js';
import { Transport, type ConnectionOptions } from './http.js';
import { DeadLetters, Queues, Schedules } from './admin.js';
import { type BatchItem, type SubmitOptions } from './submission.js';
import { type SignalDelivered, type Task, type TaskPage, type TaskStatus, type WorkerInfo, type Workflow } from './types.js';
import { type WorkflowNode } from './workflow.js';
/** The filters of list (GET /api/v1/tasks). */
export interface ListOptions {
    /** Default "default". */
    queue?: string;
    status?: TaskStatus;
    type?: string;
    /** Only suspended tasks (a durable sleep or a wait), earliest due first. */
    suspended?: boolean;
    idPrefix?: string;
    /** A part of the last error, any letter case. */
    error?: string;
    createdAfter?: Date | string;
    createdBefore?: Date | string;
    /** 1-500. Default 50. */
    limit?: number;
    /** The nextCursor of the page before. */
    cursor?: string;
}
/** One item's outcome in submitMany: the task, or the typed error of that item alone. */
export type BatchResult = {
    status: number;
    task: Task;
    error?: undefined;
} | {
    status: number;
    task?: undefined;
    error: DtqError;
};
export declare class Client {
    /** The transport, shared with the admin objects. */
    readonly http: Transport;
    readonly workflows: Workflows;
    readonly schedules: Schedules;
    readonly deadLetters: DeadLetters;
    readonly queues: Queues;
    constructor(opts?: ConnectionOptions);
    /** The API's base URL. */
    get url(): string;
    /**
     * submit enqueues a task of type with payload (any JSON value). It answers
     * the task: a new one, or with `duplicate` an existing one (an idempotent
     * replay, a unique task's lock holder).
     */
    submit(type: string, payload?: unknown, opts?: SubmitOptions): Promise<Task>;
    /**
     * submitMany enqueues independent tasks in one round trip (up to the
     * server's --max-batch, 1000 by default). Each item stands alone: its
     * result has the task or that item's typed error, in order.
     */
    submitMany(items: BatchItem[]): Promise<BatchResult[]>;
    /** get reads a task: NotFoundError if unknown or expired. */
    get(id: string): Promise<Task>;
    /** list reads a page of a queue's tasks (CONTRACT §3.6.6's order). */
    list(opts?: ListOptions): Promise<TaskPage>;
    /** iterate yields every task list would page through, following the cursors. */
    iterate(opts?: Omit<ListOptions, 'cursor'>): AsyncGenerator<Task>;
    /** cancel cancels a task (a running one through its worker); NotCancellableError once it finished. */
    cancel(id: string): Promise<Task>;
    /**
     * signal sends the signal name with payload to a task, for its durable
     * wait of that name (ctx.waitFor): SignalDeliveredError when it has that
     * signal already, TaskFinishedError once it finished.
     */
    signal(taskId: string, name: string, payload?: unknown): Promise<SignalDelivered>;
    /** workers lists the live workers: Go workers and lease holders (such as this library's Worker). */
    workers(): Promise<WorkerInfo[]>;
    /** close ends the idle connections. */
    close(): void;
}
/** The options of a workflow's submission. */
export interface WorkflowOptions {
    /** Every task of the workflow goes to this queue. Default "default". */
    queue?: string;
    /** Sent as Idempotency-Key: a repeat answers the first workflow (duplicate). */
    idempotencyKey?: string;
}
/** Workflows: submit, get and cancel graphs of tasks (client.workflows). */
export declare class Workflows {
    private readonly http;
    constructor(http: Transport);
    /** submit submits a workflow whose root is node (build one with task, chain and parallel). */
    submit(root: WorkflowNode, opts?: WorkflowOptions): Promise<Workflow>;
    get(id: string): Promise<Workflow>;
    /** cancel: no node starts any more and the active nodes' tasks are cancelled. */
    cancel(id: string): Promise<Workflow>;
}
