// The administration of schedules, dead letters and queues
// (client.schedules, client.deadLetters, client.queues).

import { invalid } from './errors.js';
import { seg, type Transport } from './http.js';
import { taskBody, type TaskOptions } from './submission.js';
import {
  deadLetterFromWire, queueFromWire, scheduleFromWire, taskFromWire,
  type DeadLetterPage, type DeletedQueue, type QueueStats, type RedriveResult, type Schedule, type Task,
} from './types.js';
import { checkInt, checkKeys, checkNumber, checkObject, checkString, describe, timeParam } from './validate.js';

type Wire = Record<string, unknown>;

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

export class Schedules {
  constructor(private readonly http: Transport) {}

  /** put creates or replaces the schedule name of queue; answers it. */
  async put(queue: string, name: string, def: ScheduleDefinition): Promise<Schedule> {
    checkString('queue', queue);
    checkString('name', name);
    checkObject('definition', def);
    checkKeys('definition', def, ['cron', 'type', 'payload', 'timeZone', 'missed', 'catchUpMax', 'paused', 'priority', 'maxAttempts', 'timeoutSeconds']);
    checkString('definition.cron', def.cron);
    const { cron, type, payload, timeZone, missed, catchUpMax, paused, ...opts } = def;
    const body = taskBody('definition', type, payload, opts);
    body['cron'] = cron;
    if (timeZone !== undefined) {
      checkString('definition.timeZone', timeZone);
      body['time_zone'] = timeZone;
    }
    if (missed !== undefined) {
      if (missed !== 'skip' && missed !== 'catch_up') throw invalid('definition.missed', `must be "skip" or "catch_up" (got ${describe(missed)})`);
      body['missed'] = missed;
    }
    if (catchUpMax !== undefined) {
      checkInt('definition.catchUpMax', catchUpMax, 0, 1_000_000);
      body['catch_up_max'] = catchUpMax;
    }
    if (paused !== undefined) body['paused'] = paused === true;
    return scheduleFromWire((await this.http.request<Wire>('PUT', path(queue, name), body)).body);
  }

  async get(queue: string, name: string): Promise<Schedule> {
    return scheduleFromWire((await this.http.request<Wire>('GET', path(queue, name))).body);
  }

  /** delete removes the schedule (the tasks it created stay); answers its name. */
  async delete(queue: string, name: string): Promise<string> {
    return (await this.http.request<{ deleted: string }>('DELETE', path(queue, name))).body.deleted;
  }

  async pause(queue: string, name: string): Promise<Schedule> {
    return scheduleFromWire((await this.http.request<Wire>('POST', path(queue, name) + '/pause')).body);
  }

  async resume(queue: string, name: string): Promise<Schedule> {
    return scheduleFromWire((await this.http.request<Wire>('POST', path(queue, name) + '/resume')).body);
  }

  /** list lists the schedules of queue, or of every queue. */
  async list(queue?: string): Promise<Schedule[]> {
    const a = await this.http.request<{ schedules: Wire[] }>('GET', '/api/v1/schedules' + queueQuery(queue));
    return a.body.schedules.map(scheduleFromWire);
  }
}

function path(queue: string, name: string): string {
  checkString('queue', queue);
  checkString('name', name);
  return `/api/v1/schedules/${seg(queue)}/${seg(name)}`;
}

function queueQuery(queue: string | undefined): string {
  if (queue === undefined) return '';
  checkString('queue', queue);
  return `?queue=${encodeURIComponent(queue)}`;
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

export class DeadLetters {
  constructor(private readonly http: Transport) {}

  /** list reads a page of a queue's dead letters, newest first. */
  async list(opts: { queue?: string; limit?: number; cursor?: string } = {}): Promise<DeadLetterPage> {
    checkObject('options', opts);
    checkKeys('', opts, ['queue', 'limit', 'cursor']);
    const q = new URLSearchParams();
    if (opts.queue !== undefined) {
      checkString('queue', opts.queue);
      q.set('queue', opts.queue);
    }
    if (opts.limit !== undefined) {
      checkInt('limit', opts.limit, 1, 1000);
      q.set('limit', String(opts.limit));
    }
    if (opts.cursor !== undefined) {
      checkString('cursor', opts.cursor);
      q.set('cursor', opts.cursor);
    }
    const qs = q.toString();
    const a = await this.http.request<{ dead_letters: Wire[]; next_cursor: string }>('GET', `/api/v1/dlq${qs ? '?' + qs : ''}`);
    return { deadLetters: a.body.dead_letters.map(deadLetterFromWire), nextCursor: a.body.next_cursor };
  }

  /** requeue puts a dead task back to QUEUED, attempts reset; NotDeadError if it is not a dead letter. */
  async requeue(id: string): Promise<Task> {
    checkString('id', id);
    return taskFromWire((await this.http.request<Wire>('POST', `/api/v1/dlq/${seg(id)}/requeue`)).body);
  }

  /** requeueAll requeues every dead letter of queue (or of every queue); answers how many. */
  async requeueAll(queue?: string): Promise<number> {
    return (await this.http.request<{ requeued: number }>('POST', '/api/v1/dlq/requeue' + queueQuery(queue))).body.requeued;
  }

  /** redrive requeues the dead letters matching every given filter, oldest first; call again while `more`. */
  async redrive(opts: RedriveOptions = {}): Promise<RedriveResult> {
    checkObject('options', opts);
    checkKeys('', opts, ['queue', 'type', 'errorContains', 'deadAfter', 'deadBefore', 'dryRun', 'limit', 'ratePerSecond']);
    const b: Record<string, unknown> = { dry_run: opts.dryRun === true };
    for (const [k, name] of [['queue', 'queue'], ['type', 'task_type'], ['errorContains', 'error_contains']] as const) {
      const v = opts[k];
      if (v !== undefined) {
        checkString(k, v);
        b[name] = v;
      }
    }
    if (opts.deadAfter !== undefined) b['dead_after'] = timeParam('deadAfter', opts.deadAfter);
    if (opts.deadBefore !== undefined) b['dead_before'] = timeParam('deadBefore', opts.deadBefore);
    if (opts.limit !== undefined) {
      checkInt('limit', opts.limit, 1, 10_000);
      b['limit'] = opts.limit;
    }
    if (opts.ratePerSecond !== undefined) {
      checkNumber('ratePerSecond', opts.ratePerSecond, 0, { exclusive: true });
      b['rate_per_second'] = opts.ratePerSecond;
    }
    const a = await this.http.request<{ matched: number; requeued: number; dry_run: boolean; more: boolean }>('POST', '/api/v1/dlq/redrive', b);
    return { matched: a.body.matched, requeued: a.body.requeued, dryRun: a.body.dry_run, more: a.body.more };
  }

  /** discard removes a dead letter from its stream (the task stays DEAD until it expires). */
  async discard(id: string): Promise<void> {
    checkString('id', id);
    await this.http.request('DELETE', `/api/v1/dlq/${seg(id)}`);
  }

  /** purge discards every dead letter of queue (or of every queue); answers how many. */
  async purge(queue?: string): Promise<number> {
    return (await this.http.request<{ discarded: number }>('DELETE', '/api/v1/dlq' + queueQuery(queue))).body.discarded;
  }
}

export class Queues {
  constructor(private readonly http: Transport) {}

  /** list answers every queue that exists, with its counts. */
  async list(): Promise<QueueStats[]> {
    return (await this.http.request<{ queues: Wire[] }>('GET', '/api/v1/queues')).body.queues.map(queueFromWire);
  }

  /** get answers a queue's counts and totals; NotFoundError for a queue that does not exist. */
  async get(name: string): Promise<QueueStats> {
    checkString('name', name);
    return queueFromWire((await this.http.request<Wire>('GET', `/api/v1/queues/${seg(name)}`)).body);
  }

  /** pause: workers stop starting its tasks (running ones finish; submissions are accepted). */
  async pause(name: string): Promise<QueueStats> {
    checkString('name', name);
    return queueFromWire((await this.http.request<Wire>('POST', `/api/v1/queues/${seg(name)}/pause`)).body);
  }

  async resume(name: string): Promise<QueueStats> {
    checkString('name', name);
    return queueFromWire((await this.http.request<Wire>('POST', `/api/v1/queues/${seg(name)}/resume`)).body);
  }

  /** delete deletes a queue and everything of it; QueueNotEmptyError unless it is empty or force. */
  async delete(name: string, opts: { force?: boolean } = {}): Promise<DeletedQueue> {
    checkString('name', name);
    const q = opts.force ? '?force=true' : '';
    return (await this.http.request<DeletedQueue>('DELETE', `/api/v1/queues/${seg(name)}${q}`)).body;
  }
}
