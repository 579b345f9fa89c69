// A task's submission: the options of POST /api/v1/tasks in camelCase, and
// the body they become.
import { invalid } from './errors.js';
import { checkInt, checkKeys, checkNumber, checkObject, checkString, describe } from './validate.js';
const taskOptionKeys = ['priority', 'maxAttempts', 'timeoutSeconds'];
const submitKeys = [...taskOptionKeys, 'queue', 'delaySeconds', 'runAt', 'unique', 'group', 'limitKey', 'orderKey', 'debounce', 'idempotencyKey', 'traceparent'];
const batchKeys = ['type', 'payload', ...submitKeys.filter((k) => k !== 'idempotencyKey' && k !== 'traceparent')];
const statuses = ['QUEUED', 'SCHEDULED', 'RUNNING', 'SUCCEEDED', 'DEAD', 'CANCELLED'];
/** taskBody is the body of a task (type, payload, and the options any task takes). */
export function taskBody(where, type, payload, o) {
    checkString(where ? `${where}.type` : 'type', type);
    const f = (k) => (where ? `${where}.${k}` : k);
    const body = { task_type: type };
    if (payload !== undefined)
        body['payload'] = payload;
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
export function submissionBody(where, type, payload, o, allowed = submitKeys) {
    checkObject(where || 'options', o);
    checkKeys(where, o, allowed);
    const f = (k) => (where ? `${where}.${k}` : k);
    const body = taskBody(where, type, payload, o);
    if (o.queue !== undefined) {
        checkString(f('queue'), o.queue);
        body['queue'] = o.queue;
    }
    if (o.delaySeconds !== undefined && o.runAt !== undefined)
        throw invalid(f('runAt'), 'and delaySeconds are exclusive: give one');
    if (o.delaySeconds !== undefined) {
        checkNumber(f('delaySeconds'), o.delaySeconds, 0);
        body['delay_seconds'] = o.delaySeconds;
    }
    if (o.runAt !== undefined)
        body['delay_seconds'] = delayUntil(f('runAt'), o.runAt);
    if (o.unique !== undefined)
        body['unique'] = uniqueBody(f('unique'), o.unique);
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
        if (o.unique !== undefined)
            throw invalid(f('orderKey'), 'and unique are exclusive: give one');
        body['order_key'] = o.orderKey;
    }
    if (o.debounce !== undefined) {
        for (const k of ['unique', 'orderKey', 'delaySeconds', 'runAt']) {
            if (o[k] !== undefined)
                throw invalid(f('debounce'), `and ${k} are exclusive: give one (the debounce decides when the task is due)`);
        }
        body['debounce'] = debounceBody(f('debounce'), o.debounce);
    }
    return body;
}
/** batchBody is one item of POST /api/v1/tasks/batch. */
export function batchBody(i, item) {
    const where = `tasks[${i}]`;
    checkObject(where, item);
    const { type, payload, ...opts } = item;
    checkKeys(where, item, batchKeys);
    return submissionBody(where, type, payload, opts, batchKeys);
}
/** submitHeaders are the headers of submit's options (Idempotency-Key, traceparent). */
export function submitHeaders(o) {
    const h = {};
    if (o.idempotencyKey !== undefined) {
        checkString('idempotencyKey', o.idempotencyKey);
        if (o.unique !== undefined)
            throw invalid('idempotencyKey', 'and unique are exclusive: give one');
        if (o.debounce !== undefined)
            throw invalid('idempotencyKey', 'and debounce are exclusive: give one');
        h['Idempotency-Key'] = o.idempotencyKey;
    }
    if (o.traceparent !== undefined) {
        checkString('traceparent', o.traceparent);
        h['traceparent'] = o.traceparent;
    }
    return h;
}
function uniqueBody(field, u) {
    if (u === true)
        return {};
    checkObject(field, u);
    checkKeys(field, u, ['key', 'states', 'periodSeconds']);
    const b = {};
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
function debounceBody(field, d) {
    checkObject(field, d);
    checkKeys(field, d, ['key', 'periodSeconds', 'maxWaitSeconds', 'keepFirst']);
    checkString(`${field}.key`, d.key);
    checkNumber(`${field}.periodSeconds`, d.periodSeconds, 0, { exclusive: true });
    const b = { key: d.key, period_seconds: d.periodSeconds };
    if (d.maxWaitSeconds !== undefined) {
        checkNumber(`${field}.maxWaitSeconds`, d.maxWaitSeconds, 0);
        b['max_wait_seconds'] = d.maxWaitSeconds;
    }
    if (d.keepFirst !== undefined) {
        if (typeof d.keepFirst !== 'boolean')
            throw invalid(`${field}.keepFirst`, `must be a boolean (got ${describe(d.keepFirst)})`);
        b['keep_first'] = d.keepFirst;
    }
    return b;
}
/** delayUntil turns a time into seconds from now (0 for a time past). */
function delayUntil(field, at) {
    let ms;
    if (at instanceof Date)
        ms = at.getTime();
    else if (typeof at === 'number')
        ms = at;
    else if (typeof at === 'string')
        ms = Date.parse(at);
    else
        throw invalid(field, `must be a Date, an RFC 3339 string or epoch milliseconds (got ${describe(at)})`);
    if (!Number.isFinite(ms))
        throw invalid(field, `is not a valid time (got ${describe(at)})`);
    return Math.max(0, (ms - Date.now()) / 1000);
}
