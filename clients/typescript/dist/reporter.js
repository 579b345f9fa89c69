// Reporter records the outcomes of leased tasks in batches: one
// POST /api/v1/leases/outcomes carries every outcome that finished while the
// call before it was in flight (up to 100 an item; more go in calls side by
// side). A server without that route (404/405: older than the batch route)
// gets one …/complete or …/fail per lease instead, from then on.
//
// A report that cannot reach the server (no connection, 503) is retried until
// the outcome's deadline — the lease's time after the handler ended — since
// recording an outcome twice is harmless; past it the task is the server's to
// take over. A lease_lost answer for an item means the task is no longer ours:
// it is dropped.
import { ConnectionError, DtqError, MethodNotAllowedError, NotFoundError, UnavailableError, errorFromAnswer } from './errors.js';
import { RawJson, seg } from './http.js';
export const MAX_BATCH = 100;
export class Reporter {
    http;
    onRecorded;
    pending = [];
    flushing = null;
    /** batch until the server shows it has no batch route. */
    batch = true;
    constructor(http, onRecorded) {
        this.http = http;
        this.onRecorded = onRecorded;
    }
    /** add queues an outcome; it is sent in this turn's call, or, while one is in flight, in the next. */
    add(o) {
        this.pending.push(o);
        if (this.flushing === null)
            this.flushing = this.loop();
    }
    /** idle resolves once every outcome added so far is recorded or given up. */
    async idle() {
        while (this.flushing !== null)
            await this.flushing;
    }
    /** usesBatches tells whether the server took the batch route (false after it answered 404). */
    get usesBatches() {
        return this.batch;
    }
    async loop() {
        // Start on the next turn of the event loop, not at once: the handlers that
        // end in this turn (a leased batch of quick tasks) then share one call.
        await new Promise((resolve) => setImmediate(resolve));
        try {
            while (this.pending.length > 0) {
                const all = this.pending;
                this.pending = [];
                const calls = [];
                for (let i = 0; i < all.length; i += MAX_BATCH)
                    calls.push(this.send(all.slice(i, i + MAX_BATCH)));
                await Promise.all(calls);
            }
        }
        finally {
            this.flushing = null;
        }
    }
    async send(items) {
        if (!this.batch) {
            await Promise.all(items.map((o) => this.sendOne(o)));
            return;
        }
        const body = new RawJson(`{"outcomes":[${items.map(wireText).join(',')}]}`);
        let answer;
        try {
            answer = await retrying(Math.max(...items.map((o) => o.deadline)), async () => (await this.http.request('POST', '/api/v1/leases/outcomes', body)).body);
        }
        catch (e) {
            if (e instanceof NotFoundError || e instanceof MethodNotAllowedError) {
                this.batch = false;
                await Promise.all(items.map((o) => this.sendOne(o)));
                return;
            }
            for (const o of items)
                this.onRecorded(o, { error: asDtq(e) });
            return;
        }
        items.forEach((o, i) => {
            const r = answer.outcomes[i];
            if (r?.error)
                this.onRecorded(o, { error: errorFromAnswer(r.error.code === 'lease_lost' ? 409 : 400, r.error) });
            else
                this.onRecorded(o, r?.status !== undefined ? { status: r.status } : {});
        });
    }
    async sendOne(o) {
        const path = `/api/v1/leases/${seg(o.lease)}/${o.kind}`;
        const body = o.kind === 'complete' ? new RawJson(`{"result":${o.resultJson}}`) : failureBody(o);
        try {
            const t = await retrying(o.deadline, async () => (await this.http.request('POST', path, body)).body);
            this.onRecorded(o, { status: t.status });
        }
        catch (e) {
            this.onRecorded(o, { error: asDtq(e) });
        }
    }
}
/** wireText is an outcome's item of the batch route, as JSON text (the result is JSON text already). */
function wireText(o) {
    if (o.kind === 'complete')
        return `{"lease":${JSON.stringify(o.lease)},"result":${o.resultJson}}`;
    return JSON.stringify({ lease: o.lease, ...failureBody(o) });
}
function failureBody(o) {
    const b = { error: o.error, class: o.class };
    if (o.retryAfterSeconds !== undefined)
        b['retry_after_seconds'] = o.retryAfterSeconds;
    return b;
}
/** retrying calls fn until it succeeds, fails for good, or deadline (epoch ms) passes. */
async function retrying(deadline, fn) {
    let delay = 50;
    for (;;) {
        try {
            return await fn();
        }
        catch (e) {
            const again = e instanceof ConnectionError || e instanceof UnavailableError;
            if (!again || Date.now() + delay > deadline)
                throw e;
            await new Promise((r) => setTimeout(r, delay));
            delay = Math.min(delay * 2, 1000);
        }
    }
}
function asDtq(e) {
    return e instanceof DtqError ? e : new DtqError('internal', 0, String(e));
}
