// The API's answers as TypeScript types, in camelCase, and the functions that
// read them from the wire's snake_case JSON. Payloads, results and step
// results are the user's JSON and are handed over untouched. Times are Date.

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

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

function date(v: unknown): Date {
  return new Date(v as string);
}

function optDate(v: unknown): Date | undefined {
  return typeof v === 'string' ? new Date(v) : undefined;
}

/** set copies v to o[k] unless it is undefined (so that absent fields stay absent). */
function set<T extends object, K extends keyof T>(o: T, k: K, v: T[K] | undefined): void {
  if (v !== undefined) o[k] = v;
}

export function taskFromWire(w: Wire): Task {
  const t: Task = {
    id: w['id'] as string,
    queue: w['queue'] as string,
    taskType: w['task_type'] as string,
    payload: w['payload'] ?? null,
    priority: w['priority'] as number,
    status: w['status'] as TaskStatus,
    attempt: w['attempt'] as number,
    maxAttempts: w['max_attempts'] as number,
    crashes: (w['crashes'] as number | undefined) ?? 0,
    cancelRequested: w['cancel_requested'] === true,
    history: Array.isArray(w['history']) ? (w['history'] as Wire[]).map(executionFromWire) : [],
    groupWaiting: w['group_waiting'] === true,
    orderWaiting: w['order_waiting'] === true,
    duplicate: w['duplicate'] === true,
    debounced: w['debounced'] === true,
    timeoutSeconds: w['timeout_seconds'] as number,
    createdAt: date(w['created_at']),
  };
  if ('result' in w) t.result = w['result'];
  set(t, 'lastError', w['last_error'] as string | undefined);
  set(t, 'worker', w['worker'] as string | undefined);
  set(t, 'schedule', w['schedule'] as string | undefined);
  set(t, 'scheduleTick', optDate(w['schedule_tick']));
  set(t, 'group', w['group'] as string | undefined);
  set(t, 'limitKey', w['limit_key'] as string | undefined);
  set(t, 'orderKey', w['order_key'] as string | undefined);
  set(t, 'heldBy', w['held_by'] as string | undefined);
  set(t, 'workflow', w['workflow'] as string | undefined);
  set(t, 'workflowNode', w['workflow_node'] as number | undefined);
  if ('previous' in w) t.previous = w['previous'];
  set(t, 'traceparent', w['traceparent'] as string | undefined);
  const p = w['progress'] as Wire | undefined;
  if (p) t.progress = progressFromWire(p);
  if (Array.isArray(w['steps'])) t.steps = (w['steps'] as Wire[]).map(stepFromWire);
  const s = w['suspended'] as Wire | undefined;
  if (s) t.suspended = suspensionFromWire(s);
  set(t, 'scheduledAt', optDate(w['scheduled_at']));
  set(t, 'startedAt', optDate(w['started_at']));
  set(t, 'finishedAt', optDate(w['finished_at']));
  return t;
}

function executionFromWire(w: Wire): Execution {
  const e: Execution = {
    run: w['run'] as number, worker: w['worker'] as string, outcome: w['outcome'] as string,
    startedAt: date(w['started_at']), finishedAt: date(w['finished_at']),
  };
  set(e, 'error', w['error'] as string | undefined);
  return e;
}

export function progressFromWire(w: Wire): TaskProgress {
  const p: TaskProgress = { fraction: w['fraction'] as number, at: date(w['at']) };
  set(p, 'note', w['note'] as string | undefined);
  return p;
}

function stepFromWire(w: Wire): TaskStep {
  const s: TaskStep = { name: w['name'] as string, run: w['run'] as number, result: w['result'] ?? null, at: date(w['at']) };
  set(s, 'by', w['by'] as string | undefined);
  return s;
}

export function suspensionFromWire(w: Wire): Suspension {
  return { for: w['for'] as string, name: w['name'] as string, until: date(w['until']) };
}

/** A signal's answer. */
export interface SignalDelivered {
  taskId: string;
  name: string;
  delivered: boolean;
}

// ---- workflows

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

export function workflowFromWire(w: Wire): Workflow {
  const f: Workflow = {
    id: w['id'] as string, queue: w['queue'] as string, status: w['status'] as WorkflowStatus,
    cancelRequested: w['cancel_requested'] === true, progress: w['progress'] as WorkflowProgress,
    root: nodeFromWire(w['root'] as Wire), duplicate: w['duplicate'] === true, createdAt: date(w['created_at']),
  };
  if ('result' in w) f.result = w['result'];
  set(f, 'error', w['error'] as string | undefined);
  set(f, 'finishedAt', optDate(w['finished_at']));
  return f;
}

function nodeFromWire(w: Wire): WorkflowNodeState {
  const n: WorkflowNodeState = { node: w['node'] as number, kind: w['kind'] as WorkflowNodeState['kind'], status: w['status'] as string };
  set(n, 'taskId', w['task_id'] as string | undefined);
  set(n, 'taskType', w['task_type'] as string | undefined);
  if ('result' in w) n.result = w['result'];
  set(n, 'error', w['error'] as string | undefined);
  if (Array.isArray(w['nodes'])) n.nodes = (w['nodes'] as Wire[]).map(nodeFromWire);
  if (Array.isArray(w['children'])) n.children = (w['children'] as Wire[]).map(nodeFromWire);
  if (w['on_success']) n.onSuccess = nodeFromWire(w['on_success'] as Wire);
  if (w['on_complete']) n.onComplete = nodeFromWire(w['on_complete'] as Wire);
  return n;
}

// ---- schedules

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

export function scheduleFromWire(w: Wire): Schedule {
  const s: Schedule = {
    name: w['name'] as string, queue: w['queue'] as string, cron: w['cron'] as string, timeZone: w['time_zone'] as string,
    taskType: w['task_type'] as string, payload: w['payload'] ?? null, priority: w['priority'] as number,
    maxAttempts: w['max_attempts'] as number, timeoutSeconds: w['timeout_seconds'] as number, missed: w['missed'] as string,
    catchUpMax: w['catch_up_max'] as number, paused: w['paused'] === true,
    createdAt: date(w['created_at']), updatedAt: date(w['updated_at']),
  };
  set(s, 'nextRun', optDate(w['next_run']));
  set(s, 'lastTick', optDate(w['last_tick']));
  set(s, 'lastTaskId', w['last_task_id'] as string | undefined);
  return s;
}

// ---- dead letters, queues, workers

export interface DeadLetter {
  task: Task;
  reason: string;
  deadAt: Date;
}

export interface DeadLetterPage {
  deadLetters: DeadLetter[];
  nextCursor: string;
}

export function deadLetterFromWire(w: Wire): DeadLetter {
  return { task: taskFromWire(w['task'] as Wire), reason: w['reason'] as string, deadAt: date(w['dead_at']) };
}

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

export function queueFromWire(w: Wire): QueueStats {
  const n = (k: string): number => (w[k] as number | undefined) ?? 0;
  return {
    name: w['name'] as string, paused: w['paused'] === true, queued: n('queued'), scheduled: n('scheduled'),
    running: n('running'), dead: n('dead'), queuedByPriority: (w['queued_by_priority'] as number[] | undefined) ?? [],
    groupWaiting: n('group_waiting'), limitWaiting: n('limit_waiting'), orderWaiting: n('order_waiting'), suspended: n('suspended'),
    submittedTotal: n('submitted_total'), succeededTotal: n('succeeded_total'), retriedTotal: n('retried_total'),
    deadTotal: n('dead_total'), cancelledTotal: n('cancelled_total'),
  };
}

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

export function workerFromWire(w: Wire): WorkerInfo {
  const i: WorkerInfo = {
    id: w['id'] as string, host: w['host'] as string, pid: (w['pid'] as number | undefined) ?? 0,
    queues: (w['queues'] as string[] | undefined) ?? [], concurrency: (w['concurrency'] as number | undefined) ?? 0,
    busy: (w['busy'] as number | undefined) ?? 0, kind: w['kind'] as string,
    startedAt: date(w['started_at']), lastHeartbeat: date(w['last_heartbeat']),
  };
  set(i, 'library', w['library'] as string | undefined);
  return i;
}
