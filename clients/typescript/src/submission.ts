// A task's submission: the options of POST /api/v1/tasks in camelCase, and
// the body they become.

import { invalid } from './errors.js';
import { checkInt, checkKeys, checkNumber, checkObject, checkString, describe } from './validate.js';
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

const taskOptionKeys = ['priority', 'maxAttempts', 'timeoutSeconds'] as const;
const submitKeys = [...taskOptionKeys, 'queue', 'delaySeconds', 'runAt', 'unique', 'group', 'limitKey', 'orderKey', 'debounce', 'idempotencyKey', 'traceparent'] as const;
const batchKeys = ['type', 'payload', ...submitKeys.filter((k) => k !== 'idempotencyKey' && k !== 'traceparent')] as const;
const statuses = ['QUEUED', 'SCHEDULED', 'RUNNING', 'SUCCEEDED', 'DEAD', 'CANCELLED'];

/** taskBody is the body of a task (type, payload, and the options any task takes). */
export function taskBody(where: string, type: unknown, payload: unknown, o: TaskOptions): Record<string, unknown> {
  checkString(where ? `${where}.type` : 'type', type);
  const f = (k: string): string => (where ? `${where}.${k}` : k);
  const body: Record<string, unknown> = { task_type: type };
  if (payload !== undefined) body['payload'] = payload;
  if (o.priority !== undefined) {
    checkInt(f('priority'), o.priority, 0, 9);
    body['priority'] = o.priority;
  }
  if (o.maxAttempts !== undefined) {
    checkInt(f('maxAttempts'), o.maxAttempts, 1, 1000);
    body['max_attempts'] = o.maxAttempts;
  }
  if (o.timeoutSeconds !== undefined) {
    checkNumber(f('timeoutSeconds'), o.timeoutSeconds, 0, { exclusive: true });
    body['timeout_seconds'] = o.timeoutSeconds;
  }
  return body;
}

/** submissionBody is the JSON body of POST /api/v1/tasks (or one batch item, or a child's task). */
export function submissionBody(where: string, type: unknown, payload: unknown, o: SubmitOptions, allowed: readonly string[] = submitKeys): Record<string, unknown> {
  checkObject(where || 'options', o);
  checkKeys(where, o, allowed);
  const f = (k: string): string => (where ? `${where}.${k}` : k);
  const body = taskBody(where, type, payload, o);
  if (o.queue !== undefined) {
    checkString(f('queue'), o.queue);
    body['queue'] = o.queue;
  }
  if (o.delaySeconds !== undefined && o.runAt !== undefined) throw invalid(f('runAt'), 'and delaySeconds are exclusive: give one');
  if (o.delaySeconds !== undefined) {
    checkNumber(f('delaySeconds'), o.delaySeconds, 0);
    body['delay_seconds'] = o.delaySeconds;
  }
  if (o.runAt !== undefined) body['delay_seconds'] = delayUntil(f('runAt'), o.runAt);
  if (o.unique !== undefined) body['unique'] = uniqueBody(f('unique'), o.unique);
  if (o.group !== undefined) {
    checkString(f('group'), o.group);
    body['group'] = o.group;
  }
  if (o.limitKey !== undefined) {
    checkString(f('limitKey'), o.limitKey);
    body['limit_key'] = o.limitKey;
  }
  if (o.orderKey !== undefined) {
    checkString(f('orderKey'), o.orderKey);
    if (o.unique !== undefined) throw invalid(f('orderKey'), 'and unique are exclusive: give one');
    body['order_key'] = o.orderKey;
  }
  if (o.debounce !== undefined) {
    for (const k of ['unique', 'orderKey', 'delaySeconds', 'runAt'] as const) {
      if (o[k] !== undefined) throw invalid(f('debounce'), `and ${k} are exclusive: give one (the debounce decides when the task is due)`);
    }
    body['debounce'] = debounceBody(f('debounce'), o.debounce);
  }
  return body;
}

/** batchBody is one item of POST /api/v1/tasks/batch. */
export function batchBody(i: number, item: BatchItem): Record<string, unknown> {
  const where = `tasks[${i}]`;
  checkObject(where, item);
  const { type, payload, ...opts } = item;
  checkKeys(where, item, batchKeys);
  return submissionBody(where, type, payload, opts, batchKeys);
}

/** submitHeaders are the headers of submit's options (Idempotency-Key, traceparent). */
export function submitHeaders(o: SubmitOptions): Record<string, string> {
  const h: Record<string, string> = {};
  if (o.idempotencyKey !== undefined) {
    checkString('idempotencyKey', o.idempotencyKey);
    if (o.unique !== undefined) throw invalid('idempotencyKey', 'and unique are exclusive: give one');
    if (o.debounce !== undefined) throw invalid('idempotencyKey', 'and debounce are exclusive: give one');
    h['Idempotency-Key'] = o.idempotencyKey;
  }
  if (o.traceparent !== undefined) {
    checkString('traceparent', o.traceparent);
    h['traceparent'] = o.traceparent;
  }
  return h;
}

function uniqueBody(field: string, u: UniqueOptions | true): Record<string, unknown> {
  if (u === true) return {};
  checkObject(field, u);
  checkKeys(field, u, ['key', 'states', 'periodSeconds']);
  const b: Record<string, unknown> = {};
  if (u.key !== undefined) {
    checkString(`${field}.key`, u.key);
    b['key'] = u.key;
  }
  if (u.states !== undefined) {
    if (!Array.isArray(u.states) || u.states.some((s) => !statuses.includes(s))) {
      throw invalid(`${field}.states`, `must be an array of ${statuses.join(', ')} (got ${describe(u.states)})`);
    }
    b['states'] = u.states;
  }
  if (u.periodSeconds !== undefined) {
    checkNumber(`${field}.periodSeconds`, u.periodSeconds, 1);
    b['period_seconds'] = u.periodSeconds;
  }
  return b;
}

function debounceBody(field: string, d: DebounceOptions): Record<string, unknown> {
  checkObject(field, d);
  checkKeys(field, d, ['key', 'periodSeconds', 'maxWaitSeconds', 'keepFirst']);
  checkString(`${field}.key`, d.key);
  checkNumber(`${field}.periodSeconds`, d.periodSeconds, 0, { exclusive: true });
  const b: Record<string, unknown> = { key: d.key, period_seconds: d.periodSeconds };
  if (d.maxWaitSeconds !== undefined) {
    checkNumber(`${field}.maxWaitSeconds`, d.maxWaitSeconds, 0);
    b['max_wait_seconds'] = d.maxWaitSeconds;
  }
  if (d.keepFirst !== undefined) {
    if (typeof d.keepFirst !== 'boolean') throw invalid(`${field}.keepFirst`, `must be a boolean (got ${describe(d.keepFirst)})`);
    b['keep_first'] = d.keepFirst;
  }
  return b;
}

/** delayUntil turns a time into seconds from now (0 for a time past). */
function delayUntil(field: string, at: Date | string | number): number {
  let ms: number;
  if (at instanceof Date) ms = at.getTime();
  else if (typeof at === 'number') ms = at;
  else if (typeof at === 'string') ms = Date.parse(at);
  else throw invalid(field, `must be a Date, an RFC 3339 string or epoch milliseconds (got ${describe(at)})`);
  if (!Number.isFinite(ms)) throw invalid(field, `is not a valid time (got ${describe(at)})`);
  return Math.max(0, (ms - Date.now()) / 1000);
}
