// Client: submit tasks and workflows, read and cancel them, signal them,
// and administer schedules, dead letters, queues and workers over the API
// (docs/api.md).

import { DtqError, errorFromAnswer, invalid, type WireErrorDetail } from './errors.js';
import { Transport, seg, type ConnectionOptions } from './http.js';
import { DeadLetters, Queues, Schedules } from './admin.js';
import { batchBody, submissionBody, submitHeaders, type BatchItem, type SubmitOptions } from './submission.js';
import {
  taskFromWire, workerFromWire, workflowFromWire,
  type SignalDelivered, type Task, type TaskPage, type TaskStatus, type WorkerInfo, type Workflow,
} from './types.js';
import { nodeBody, type WorkflowNode } from './workflow.js';
import { checkInt, checkKeys, checkObject, checkString, describe, timeParam } from './validate.js';

type Wire = Record<string, unknown>;

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
export type BatchResult = { status: number; task: Task; error?: undefined } | { status: number; task?: undefined; error: DtqError };

export class Client {
  /** The transport, shared with the admin objects. */
  readonly http: Transport;
  readonly workflows: Workflows;
  readonly schedules: Schedules;
  readonly deadLetters: DeadLetters;
  readonly queues: Queues;

  constructor(opts: ConnectionOptions = {}) {
    checkObject('options', opts);
    checkKeys('', opts, ['url', 'apiKey', 'timeoutSeconds', 'maxConnections']);
    this.http = new Transport(opts);
    this.workflows = new Workflows(this.http);
    this.schedules = new Schedules(this.http);
    this.deadLetters = new DeadLetters(this.http);
    this.queues = new Queues(this.http);
  }

  /** The API's base URL. */
  get url(): string {
    return this.http.url;
  }

  /**
   * submit enqueues a task of type with payload (any JSON value). It answers
   * the task: a new one, or with `duplicate` an existing one (an idempotent
   * replay, a unique task's lock holder).
   */
  async submit(type: string, payload?: unknown, opts: SubmitOptions = {}): Promise<Task> {
    const body = submissionBody('', type, payload, opts);
    const a = await this.http.request<Wire>('POST', '/api/v1/tasks', body, { headers: submitHeaders(opts) });
    return taskFromWire(a.body);
  }

  /**
   * submitMany enqueues independent tasks in one round trip (up to the
   * server's --max-batch, 1000 by default). Each item stands alone: its
   * result has the task or that item's typed error, in order.
   */
  async submitMany(items: BatchItem[]): Promise<BatchResult[]> {
    if (!Array.isArray(items) || items.length === 0) throw invalid('items', `must be a non-empty array (got ${describe(items)})`);
    const tasks = items.map((it, i) => batchBody(i, it));
    const a = await this.http.request<{ results: { status: number; task?: Wire; error?: WireErrorDetail }[] }>('POST', '/api/v1/tasks/batch', { tasks });
    return a.body.results.map((r) => (r.task ? { status: r.status, task: taskFromWire(r.task) } : { status: r.status, error: errorFromAnswer(r.status, r.error) }));
  }

  /** get reads a task: NotFoundError if unknown or expired. */
  async get(id: string): Promise<Task> {
    checkString('id', id);
    const a = await this.http.request<Wire>('GET', `/api/v1/tasks/${seg(id)}`);
    return taskFromWire(a.body);
  }

  /** list reads a page of a queue's tasks (CONTRACT §3.6.6's order). */
  async list(opts: ListOptions = {}): Promise<TaskPage> {
    checkObject('options', opts);
    checkKeys('', opts, ['queue', 'status', 'type', 'suspended', 'idPrefix', 'error', 'createdAfter', 'createdBefore', 'limit', 'cursor']);
    const q = new URLSearchParams();
    const str = (k: keyof ListOptions, name: string): void => {
      const v = opts[k];
      if (v === undefined) return;
      checkString(k, v);
      q.set(name, v);
    };
    str('queue', 'queue');
    str('status', 'status');
    str('type', 'type');
    str('idPrefix', 'id_prefix');
    str('error', 'error');
    str('cursor', 'cursor');
    if (opts.suspended !== undefined) {
      if (typeof opts.suspended !== 'boolean') throw invalid('suspended', `must be a boolean (got ${describe(opts.suspended)})`);
      q.set('suspended', String(opts.suspended));
    }
    for (const [k, name] of [['createdAfter', 'created_after'], ['createdBefore', 'created_before']] as const) {
      const v = opts[k];
      if (v !== undefined) q.set(name, timeParam(k, v));
    }
    if (opts.limit !== undefined) {
      checkInt('limit', opts.limit, 1, 500);
      q.set('limit', String(opts.limit));
    }
    const qs = q.toString();
    const a = await this.http.request<{ tasks: Wire[]; next_cursor: string }>('GET', `/api/v1/tasks${qs ? '?' + qs : ''}`);
    return { tasks: a.body.tasks.map(taskFromWire), nextCursor: a.body.next_cursor };
  }

  /** iterate yields every task list would page through, following the cursors. */
  async *iterate(opts: Omit<ListOptions, 'cursor'> = {}): AsyncGenerator<Task> {
    let cursor: string | undefined;
    do {
      const page = await this.list(cursor === undefined ? opts : { ...opts, cursor });
      yield* page.tasks;
      cursor = page.nextCursor;
    } while (cursor !== '');
  }

  /** cancel cancels a task (a running one through its worker); NotCancellableError once it finished. */
  async cancel(id: string): Promise<Task> {
    checkString('id', id);
    const a = await this.http.request<Wire>('POST', `/api/v1/tasks/${seg(id)}/cancel`);
    return taskFromWire(a.body);
  }

  /**
   * signal sends the signal name with payload to a task, for its durable
   * wait of that name (ctx.waitFor): SignalDeliveredError when it has that
   * signal already, TaskFinishedError once it finished.
   */
  async signal(taskId: string, name: string, payload?: unknown): Promise<SignalDelivered> {
    checkString('taskId', taskId);
    checkString('name', name);
    const a = await this.http.request<{ task_id: string; name: string; delivered: boolean }>(
      'POST', `/api/v1/tasks/${seg(taskId)}/signals/${seg(name)}`, payload === undefined ? {} : { payload });
    return { taskId: a.body.task_id, name: a.body.name, delivered: a.body.delivered };
  }

  /** workers lists the live workers: Go workers and lease holders (such as this library's Worker). */
  async workers(): Promise<WorkerInfo[]> {
    const a = await this.http.request<{ workers: Wire[] }>('GET', '/api/v1/workers');
    return a.body.workers.map(workerFromWire);
  }

  /** close ends the idle connections. */
  close(): void {
    this.http.close();
  }
}

/** The options of a workflow's submission. */
export interface WorkflowOptions {
  /** Every task of the workflow goes to this queue. Default "default". */
  queue?: string;
  /** Sent as Idempotency-Key: a repeat answers the first workflow (duplicate). */
  idempotencyKey?: string;
}

/** Workflows: submit, get and cancel graphs of tasks (client.workflows). */
export class Workflows {
  constructor(private readonly http: Transport) {}

  /** submit submits a workflow whose root is node (build one with task, chain and parallel). */
  async submit(root: WorkflowNode, opts: WorkflowOptions = {}): Promise<Workflow> {
    checkObject('options', opts);
    checkKeys('', opts, ['queue', 'idempotencyKey']);
    const body: Record<string, unknown> = { root: nodeBody('root', root) };
    if (opts.queue !== undefined) {
      checkString('queue', opts.queue);
      body['queue'] = opts.queue;
    }
    const headers: Record<string, string> = {};
    if (opts.idempotencyKey !== undefined) {
      checkString('idempotencyKey', opts.idempotencyKey);
      headers['Idempotency-Key'] = opts.idempotencyKey;
    }
    const a = await this.http.request<Wire>('POST', '/api/v1/workflows', body, { headers });
    return workflowFromWire(a.body);
  }

  async get(id: string): Promise<Workflow> {
    checkString('id', id);
    return workflowFromWire((await this.http.request<Wire>('GET', `/api/v1/workflows/${seg(id)}`)).body);
  }

  /** cancel: no node starts any more and the active nodes' tasks are cancelled. */
  async cancel(id: string): Promise<Workflow> {
    checkString('id', id);
    return workflowFromWire((await this.http.request<Wire>('POST', `/api/v1/workflows/${seg(id)}/cancel`)).body);
  }
}
