// The administration of schedules, dead letters and queues
// (client.schedules, client.deadLetters, client.queues).
import { invalid } from './errors.js';
import { seg } from './http.js';
import { taskBody } from './submission.js';
import { deadLetterFromWire, queueFromWire, scheduleFromWire, taskFromWire, } from './types.js';
import { checkInt, checkKeys, checkNumber, checkObject, checkString, describe, timeParam } from './validate.js';
export class Schedules {
    http;
    constructor(http) {
        this.http = http;
    }
    /** put creates or replaces the schedule name of queue; answers it. */
    async put(queue, name, def) {
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
            if (missed !== 'skip' && missed !== 'catch_up')
                throw invalid('definition.missed', `must be "skip" or "catch_up" (got ${describe(missed)})`);
            body['missed'] = missed;
        }
        if (catchUpMax !== undefined) {
            checkInt('definition.catchUpMax', catchUpMax, 0, 1_000_000);
            body['catch_up_max'] = catchUpMax;
        }
        if (paused !== undefined)
            body['paused'] = paused === true;
        return scheduleFromWire((await this.http.request('PUT', path(queue, name), body)).body);
    }
    async get(queue, name) {
        return scheduleFromWire((await this.http.request('GET', path(queue, name))).body);
    }
    /** delete removes the schedule (the tasks it created stay); answers its name. */
    async delete(queue, name) {
        return (await this.http.request('DELETE', path(queue, name))).body.deleted;
    }
    async pause(queue, name) {
        return scheduleFromWire((await this.http.request('POST', path(queue, name) + '/pause')).body);
    }
    async resume(queue, name) {
        return scheduleFromWire((await this.http.request('POST', path(queue, name) + '/resume')).body);
    }
    /** list lists the schedules of queue, or of every queue. */
    async list(queue) {
        const a = await this.http.request('GET', '/api/v1/schedules' + queueQuery(queue));
        return a.body.schedules.map(scheduleFromWire);
    }
}
function path(queue, name) {
    checkString('queue', queue);
    checkString('name', name);
    return `/api/v1/schedules/${seg(queue)}/${seg(name)}`;
}
function queueQuery(queue) {
    if (queue === undefined)
        return '';
    checkString('queue', queue);
    return `?queue=${encodeURIComponent(queue)}`;
}
export class DeadLetters {
    http;
    constructor(http) {
        this.http = http;
    }
    /** list reads a page of a queue's dead letters, newest first. */
    async list(opts = {}) {
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
        const a = await this.http.request('GET', `/api/v1/dlq${qs ? '?' + qs : ''}`);
        return { deadLetters: a.body.dead_letters.map(deadLetterFromWire), nextCursor: a.body.next_cursor };
    }
    /** requeue puts a dead task back to QUEUED, attempts reset; NotDeadError if it is not a dead letter. */
    async requeue(id) {
        checkString('id', id);
        return taskFromWire((await this.http.request('POST', `/api/v1/dlq/${seg(id)}/requeue`)).body);
    }
    /** requeueAll requeues every dead letter of queue (or of every queue); answers how many. */
    async requeueAll(queue) {
        return (await this.http.request('POST', '/api/v1/dlq/requeue' + queueQuery(queue))).body.requeued;
    }
    /** redrive requeues the dead letters matching every given filter, oldest first; call again while `more`. */
    async redrive(opts = {}) {
        checkObject('options', opts);
        checkKeys('', opts, ['queue', 'type', 'errorContains', 'deadAfter', 'deadBefore', 'dryRun', 'limit', 'ratePerSecond']);
        const b = { dry_run: opts.dryRun === true };
        for (const [k, name] of [['queue', 'queue'], ['type', 'task_type'], ['errorContains', 'error_contains']]) {
            const v = opts[k];
            if (v !== undefined) {
                checkString(k, v);
                b[name] = v;
            }
        }
        if (opts.deadAfter !== undefined)
            b['dead_after'] = timeParam('deadAfter', opts.deadAfter);
        if (opts.deadBefore !== undefined)
            b['dead_before'] = timeParam('deadBefore', opts.deadBefore);
        if (opts.limit !== undefined) {
            checkInt('limit', opts.limit, 1, 10_000);
            b['limit'] = opts.limit;
        }
        if (opts.ratePerSecond !== undefined) {
            checkNumber('ratePerSecond', opts.ratePerSecond, 0, { exclusive: true });
            b['rate_per_second'] = opts.ratePerSecond;
        }
        const a = await this.http.request('POST', '/api/v1/dlq/redrive', b);
        return { matched: a.body.matched, requeued: a.body.requeued, dryRun: a.body.dry_run, more: a.body.more };
    }
    /** discard removes a dead letter from its stream (the task stays DEAD until it expires). */
    async discard(id) {
        checkString('id', id);
        await this.http.request('DELETE', `/api/v1/dlq/${seg(id)}`);
    }
    /** purge discards every dead letter of queue (or of every queue); answers how many. */
    async purge(queue) {
        return (await this.http.request('DELETE', '/api/v1/dlq' + queueQuery(queue))).body.discarded;
    }
}
export class Queues {
    http;
    constructor(http) {
        this.http = http;
    }
    /** list answers every queue that exists, with its counts. */
    async list() {
        return (await this.http.request('GET', '/api/v1/queues')).body.queues.map(queueFromWire);
    }
    /** get answers a queue's counts and totals; NotFoundError for a queue that does not exist. */
    async get(name) {
        checkString('name', name);
        return queueFromWire((await this.http.request('GET', `/api/v1/queues/${seg(name)}`)).body);
    }
    /** pause: workers stop starting its tasks (running ones finish; submissions are accepted). */
    async pause(name) {
        checkString('name', name);
        return queueFromWire((await this.http.request('POST', `/api/v1/queues/${seg(name)}/pause`)).body);
    }
    async resume(name) {
        checkString('name', name);
        return queueFromWire((await this.http.request('POST', `/api/v1/queues/${seg(name)}/resume`)).body);
    }
    /** delete deletes a queue and everything of it; QueueNotEmptyError unless it is empty or force. */
    async delete(name, opts = {}) {
        checkString('name', name);
        const q = opts.force ? '?force=true' : '';
        return (await this.http.request('DELETE', `/api/v1/queues/${seg(name)}${q}`)).body;
    }
}
