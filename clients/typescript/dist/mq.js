// MessageQueue: the reliable keyed message queue (package queue) over HTTP
// (docs/workers.md, "The reliable message queue over HTTP"): put bytes on a
// topic, lease them in a consumer group shared with Go subscriptions, and
// settle each lease once (ack, release, nak or term).
import * as os from 'node:os';
import { invalid } from './errors.js';
import { Transport, seg } from './http.js';
import { checkInt, checkKeys, checkNumber, checkObject, checkString, checkStrings, describe } from './validate.js';
export class MessageQueue {
    queue;
    http;
    worker;
    group;
    leaseSeconds;
    constructor(queue, opts = {}) {
        checkString('queue', queue);
        checkObject('options', opts);
        checkKeys('', opts, ['url', 'apiKey', 'timeoutSeconds', 'maxConnections', 'worker', 'group', 'leaseSeconds']);
        this.queue = queue;
        this.worker = opts.worker ?? `${os.hostname()}-${process.pid}`;
        checkString('worker', this.worker);
        if (opts.group !== undefined)
            checkString('group', opts.group);
        this.group = opts.group;
        if (opts.leaseSeconds !== undefined)
            checkNumber('leaseSeconds', opts.leaseSeconds, 0, { exclusive: true });
        this.leaseSeconds = opts.leaseSeconds;
        this.http = new Transport(opts);
    }
    get base() {
        return `/api/v1/mq/${seg(this.queue)}`;
    }
    /**
     * put puts a message (bytes, or a string sent as UTF-8) on topic. It answers
     * published: false, publishing nothing, while a message of the same key is live.
     */
    async put(topic, data, opts = {}) {
        checkString('topic', topic);
        checkObject('options', opts);
        checkKeys('', opts, ['key', 'delaySeconds', 'maxSize']);
        const body = {};
        if (typeof data === 'string')
            body['data'] = data;
        else if (data instanceof Uint8Array)
            body['data_base64'] = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
        else
            throw invalid('data', `must be a Uint8Array or a string (got ${describe(data)})`);
        if (opts.key !== undefined) {
            checkString('key', opts.key);
            body['key'] = opts.key;
        }
        if (opts.delaySeconds !== undefined) {
            checkNumber('delaySeconds', opts.delaySeconds, 0);
            body['delay_seconds'] = opts.delaySeconds;
        }
        if (opts.maxSize !== undefined) {
            checkInt('maxSize', opts.maxSize, 1, Number.MAX_SAFE_INTEGER);
            body['max_size'] = opts.maxSize;
        }
        const a = await this.http.request('POST', `${this.base}/topics/${seg(topic)}/messages`, body);
        return { published: a.body.published };
    }
    /** receive leases up to max messages of topics, waiting up to waitSeconds for a first one. */
    async receive(opts) {
        checkObject('options', opts);
        checkKeys('', opts, ['topics', 'max', 'waitSeconds', 'leaseSeconds', 'group']);
        checkStrings('topics', opts.topics);
        const body = { worker: this.worker, topics: opts.topics };
        const group = opts.group ?? this.group;
        if (group !== undefined) {
            checkString('group', group);
            body['group'] = group;
        }
        if (opts.max !== undefined) {
            checkInt('max', opts.max, 1, 100);
            body['max'] = opts.max;
        }
        let wait = 0;
        if (opts.waitSeconds !== undefined) {
            checkNumber('waitSeconds', opts.waitSeconds, 0);
            if (opts.waitSeconds > 20)
                throw invalid('waitSeconds', `must be at most 20 (got ${opts.waitSeconds})`);
            wait = opts.waitSeconds;
            body['wait_seconds'] = wait;
        }
        const lease = opts.leaseSeconds ?? this.leaseSeconds;
        if (lease !== undefined) {
            checkNumber('leaseSeconds', lease, 0, { exclusive: true });
            body['lease_seconds'] = lease;
        }
        const a = await this.http.request('POST', `${this.base}/leases`, body, { timeoutSeconds: wait + 15 });
        return a.body.leases.map((m) => new Message(this.http, this.base, m));
    }
    /** topic answers a topic's counts for a group (default: the queue's default group). */
    async topic(topic, opts = {}) {
        checkString('topic', topic);
        const group = opts.group ?? this.group;
        const q = group === undefined ? '' : `?group=${encodeURIComponent(group)}`;
        const a = await this.http.request('GET', `${this.base}/topics/${seg(topic)}${q}`);
        const b = a.body;
        return { topic: b.topic, group: b.group, queued: b.queued, inFlight: b.in_flight, delayed: b.delayed };
    }
    /** dead lists the queue's dead letters, newest first. */
    async dead(opts = {}) {
        let q = '';
        if (opts.limit !== undefined) {
            checkInt('limit', opts.limit, 1, 10_000);
            q = `?limit=${opts.limit}`;
        }
        const a = await this.http.request('GET', `${this.base}/dead${q}`);
        return a.body.dead.map((d) => ({
            id: d['id'], topic: d['topic'], messageId: d['message_id'], key: d['key'] ?? '',
            deliveries: d['deliveries'], reason: d['reason'] ?? '', data: bytes(d['data_base64']),
        }));
    }
    /** close ends the idle connections. */
    close() {
        this.http.close();
    }
}
/** A leased message: settle it once (ack, release, nak or term), extend it while working on it. */
export class Message {
    http;
    base;
    lease;
    topic;
    /** The message's stream id. */
    id;
    /** Its key (the server makes one for a message put without). */
    key;
    /** How many times it was delivered, this one included. */
    deliveries;
    /** The body. */
    data;
    /** When the lease is lost unless extended or settled. */
    deadline;
    constructor(http, base, m) {
        this.http = http;
        this.base = base;
        this.lease = m.lease;
        this.topic = m.topic;
        this.id = m.id;
        this.key = m.key ?? '';
        this.deliveries = m.deliveries;
        this.data = bytes(m.data_base64);
        this.deadline = new Date(m.deadline);
    }
    /** text decodes the body as UTF-8. */
    text() {
        return Buffer.from(this.data.buffer, this.data.byteOffset, this.data.byteLength).toString('utf8');
    }
    /** json parses the body as JSON. */
    json() {
        return JSON.parse(this.text());
    }
    /** ack settles the message as done. LeaseLostError: it is no longer yours (nothing changed). */
    async ack() {
        await this.settle('ack');
    }
    /** release gives the message back at once, to topic (default its own), without counting a failure. */
    async release(topic, opts = {}) {
        const t = topic ?? this.topic;
        checkString('topic', t);
        const body = { topic: t };
        if (opts.maxSize !== undefined) {
            checkInt('maxSize', opts.maxSize, 1, Number.MAX_SAFE_INTEGER);
            body['max_size'] = opts.maxSize;
        }
        await this.settle('release', body);
    }
    /** nak gives the message back for another delivery, after delaySeconds. */
    async nak(opts = {}) {
        let body;
        if (opts.delaySeconds !== undefined) {
            checkNumber('delaySeconds', opts.delaySeconds, 0);
            body = { delay_seconds: opts.delaySeconds };
        }
        await this.settle('nak', body);
    }
    /** term sends the message to the queue's dead letters, with a reason. */
    async term(opts = {}) {
        let body;
        if (opts.reason !== undefined) {
            checkString('reason', opts.reason, { empty: true });
            body = { reason: opts.reason };
        }
        await this.settle('term', body);
    }
    /** extend renews the lease for its time; answers the new deadline. */
    async extend() {
        const a = await this.http.request('POST', `${this.base}/leases/${seg(this.lease)}/extend`);
        this.deadline = new Date(a.body.deadline);
        return this.deadline;
    }
    async settle(verb, body) {
        await this.http.request('POST', `${this.base}/leases/${seg(this.lease)}/${verb}`, body);
    }
}
function bytes(b64) {
    if (typeof b64 !== 'string')
        return new Uint8Array(0);
    const b = Buffer.from(b64, 'base64');
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}
