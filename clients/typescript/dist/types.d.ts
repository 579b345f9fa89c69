/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | {
    [key: string]: Json;
};
export type TaskStatus = 'QUEUED' | 'SCHEDULED' | 'RUNNING' | 'SUCCEEDED' | 'DEAD' | 'CANCELLED';
/** One execution in a task's history. */
export interface Execution {
    run: number;
    worker: string;
    /** succeeded, retried, dead, cancelled, lost or suspended. */
    outcome: string;
    error?: string;
    startedAt: Date;
    finishedAt: Date;
}
/** How far the running execution said it got. */
export interface TaskProgress {
    fraction: number;
    note?: string;
    at: Date;
}
/** A durable step's record. */
export interface TaskStep {
    name: string;
    run: number;
    result: unknown;
    /** "signal" or "timeout" for a wait's record no run made. */
    by?: string;
    at: Date;
}
/** What a suspended task waits for: a durable sleep or a signal, until when. */
export interface Suspension {
    for: string;
    name: string;
    until: Date;
}
/** A task and the record of its life (GET /api/v1/tasks/{id}). */
export interface Task {
    id: string;
    queue: string;
    taskType: string;
    payload: unknown;
    priority: number;
    status: TaskStatus;
    attempt: number;
    maxAttempts: number;
    crashes: number;
    result?: unknown;
    lastError?: string;
    worker?: string;
    cancelRequested: boolean;
    history: Execution[];
    schedule?: string;
    scheduleTick?: Date;
    group?: string;
    groupWaiting: boolean;
    limitKey?: string;
    orderKey?: string;
    /** Set while the task, QUEUED, waits for the earlier tasks of its order key to end. */
    orderWaiting: boolean;
    heldBy?: string;
    workflow?: string;
    workflowNode?: number;
    /** What the workflow node before produced. */
    previous?: unknown;
    traceparent?: string;
    progress?: TaskProgress;
    steps?: TaskStep[];
    suspended?: Suspension;
    /** Set when a submission returned an existing task (idempotent replay, unique lock holder). */
    duplicate: boolean;
    /** Set when a debounced submission joined this pending task instead of creating one. */
    debounced: boolean;
    timeoutSeconds: number;
    createdAt: Date;
    scheduledAt?: Date;
    startedAt?: Date;
    finishedAt?: Date;
}
/** A page of tasks; nextCursor is "" after the last. */
export interface TaskPage {
    tasks: Task[];
    nextCursor: string;
}
type Wire = Record<string, unknown>;
export declare function taskFromWire(w: Wire): Task;
export declare function progressFromWire(w: Wire): TaskProgress;
export declare function suspensionFromWire(w: Wire): Suspension;
/** A signal's answer. */
export interface SignalDelivered {
    taskId: string;
    name: string;
    delivered: boolean;
}
export type WorkflowStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';
export interface WorkflowProgress {
    total: number;
    pending: number;
    active: number;
    succeeded: number;
    failed: number;
    cancelled: number;
    skipped: number;
}
/** The state of one node of a workflow. */
export interface WorkflowNodeState {
    node: number;
    kind: 'task' | 'chain' | 'parallel';
    /** PENDING, ACTIVE, SUCCEEDED, FAILED, CANCELLED or SKIPPED. */
    status: string;
    taskId?: string;
    taskType?: string;
    result?: unknown;
    error?: string;
    nodes?: WorkflowNodeState[];
    children?: WorkflowNodeState[];
    onSuccess?: WorkflowNodeState;
    onComplete?: WorkflowNodeState;
}
export interface Workflow {
    id: string;
    queue: string;
    status: WorkflowStatus;
    cancelRequested: boolean;
    result?: unknown;
    error?: string;
    progress: WorkflowProgress;
    root: WorkflowNodeState;
    duplicate: boolean;
    createdAt: Date;
    finishedAt?: Date;
}
export declare function workflowFromWire(w: Wire): Workflow;
export interface Schedule {
    name: string;
    queue: string;
    cron: string;
    timeZone: string;
    taskType: string;
    payload: unknown;
    priority: number;
    maxAttempts: number;
    timeoutSeconds: number;
    /** skip or catch_up. */
    missed: string;
    catchUpMax: number;
    paused: boolean;
    createdAt: Date;
    updatedAt: Date;
    nextRun?: Date;
    lastTick?: Date;
    lastTaskId?: string;
}
export declare function scheduleFromWire(w: Wire): Schedule;
export interface DeadLetter {
    task: Task;
    reason: string;
    deadAt: Date;
}
export interface DeadLetterPage {
    deadLetters: DeadLetter[];
    nextCursor: string;
}
export declare function deadLetterFromWire(w: Wire): DeadLetter;
export interface RedriveResult {
    matched: number;
    requeued: number;
    dryRun: boolean;
    /** More match beyond the limit: call again. */
    more: boolean;
}
export interface QueueStats {
    name: string;
    paused: boolean;
    queued: number;
    scheduled: number;
    running: number;
    dead: number;
    queuedByPriority: number[];
    groupWaiting: number;
    limitWaiting: number;
    /** QUEUED tasks waiting for the earlier tasks of their order key. */
    orderWaiting: number;
    suspended: number;
    submittedTotal: number;
    succeededTotal: number;
    retriedTotal: number;
    deadTotal: number;
    cancelledTotal: number;
}
export declare function queueFromWire(w: Wire): QueueStats;
/** What a deleted queue held. */
export interface DeletedQueue {
    queue: string;
    queued: number;
    scheduled: number;
    running: number;
    dead: number;
}
/** A live worker: a Go worker (kind go) or a lease holder (kind http, id http:<name>). */
export interface WorkerInfo {
    id: string;
    host: string;
    pid: number;
    queues: string[];
    concurrency: number;
    busy: number;
    kind: string;
    library?: string;
    startedAt: Date;
    lastHeartbeat: Date;
}
export declare function workerFromWire(w: Wire): WorkerInfo;
export {};
