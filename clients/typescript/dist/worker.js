// Worker runs task handlers over the HTTP lease protocol (docs/workers.md):
// it leases tasks in batches (as many as it has free slots, up to 100) with a
// long poll, runs each with the handler of its type, extends a lease only
// while its task runs past a quarter of the lease's time, enforces the task's
// timeout, and records outcomes in batches (reporter.ts).
import * as os from 'node:os';
import { DtqError, LeaseLostError, invalid } from './errors.js';
import { Transport } from './http.js';
import { TaskContext } from './context.js';
import { Permanent, RetryAfter, isSuspended } from './handler-errors.js';
import { Reporter } from './reporter.js';
import { taskFromWire } from './types.js';
import { checkFunction, checkInt, checkKeys, checkNumber, checkObject, checkString, checkStrings } from './validate.js';
import { LIBRARY } from './version.js';
/** How long a stop lets the long poll in flight bring its answer before abandoning it (ms), as the Python library does. */
const abandonPollMs = 100;
const optionKeys = ['url', 'apiKey', 'timeoutSeconds', 'maxConnections', 'queues', 'concurrency', 'leaseSeconds', 'name',
    'graceSeconds', 'handleSignals', 'pollSeconds', 'onError', 'onEvent'];
/** One execution: a leased task while its handler runs, until its outcome is decided. */
class Run {
    token;
    task;
    http;
    leaseMs;
    controller = new AbortController();
    cancelled = false;
    lost = false;
    suspended = false;
    /** The outcome is decided (reported, dropped or suspended): later ends of the handler change nothing. */
    decided = false;
    extendTimer;
    timeoutTimer;
    /** Settles when the handler returns or throws. */
    done = Promise.resolve();
    constructor(token, task, http, leaseMs) {
        this.token = token;
        this.task = task;
        this.http = http;
        this.leaseMs = leaseMs;
    }
    abort(code, message) {
        if (!this.controller.signal.aborted)
            this.controller.abort(new DtqError(code, 0, message));
    }
    /** Told once, when the lease is found lost (set by the worker). */
    onLost = () => { };
    lose(on) {
        if (!this.lost) {
            this.lost = true;
            this.onLost(on);
        }
        this.abort('lease_lost', 'the lease is lost: the task was taken over or ended otherwise');
    }
    suspend() {
        this.suspended = true;
        this.stopTimers();
    }
    stopTimers() {
        clearTimeout(this.extendTimer);
        clearTimeout(this.timeoutTimer);
    }
}
export class Worker {
    name;
    stats = { leased: 0, completed: 0, failed: 0, lost: 0, suspended: 0, unrecorded: 0, leaseCalls: 0 };
    /** Resolves once run() made its first lease call (it polls for work). */
    ready;
    http;
    reporter;
    handlers = new Map();
    types = [];
    queues;
    concurrency;
    leaseMs;
    leaseSeconds;
    graceMs;
    pollSeconds;
    handleSignals;
    onError;
    onEvent;
    saidReady = false;
    active = new Set();
    markReady = () => { };
    running = false;
    stopping = false;
    poll = null;
    stopped = new AbortController();
    graceOver = new AbortController();
    slotWaiter = null;
    finished = null;
    constructor(opts) {
        checkObject('options', opts);
        checkKeys('', opts, optionKeys);
        checkStrings('queues', opts.queues);
        this.queues = [...opts.queues];
        this.concurrency = opts.concurrency ?? 10;
        checkInt('concurrency', this.concurrency, 1, 100_000);
        this.leaseSeconds = opts.leaseSeconds ?? 30;
        checkNumber('leaseSeconds', this.leaseSeconds, 0, { exclusive: true });
        this.leaseMs = this.leaseSeconds * 1000;
        const grace = opts.graceSeconds ?? 10;
        checkNumber('graceSeconds', grace, 0);
        this.graceMs = grace * 1000;
        this.pollSeconds = opts.pollSeconds ?? 20;
        checkNumber('pollSeconds', this.pollSeconds, 0, { exclusive: true });
        if (this.pollSeconds > 20)
            throw invalid('pollSeconds', `must be at most 20 (got ${this.pollSeconds})`);
        this.name = opts.name ?? `${os.hostname()}-${process.pid}`;
        checkString('name', this.name);
        this.handleSignals = opts.handleSignals ?? true;
        if (opts.onError !== undefined)
            checkFunction('onError', opts.onError);
        this.onError = opts.onError ?? ((e) => console.error('dtq worker:', e instanceof Error ? e.message : e));
        if (opts.onEvent !== undefined)
            checkFunction('onEvent', opts.onEvent);
        this.onEvent = opts.onEvent ?? (() => { });
        this.http = new Transport(opts);
        this.reporter = new Reporter(this.http, (o, r) => this.recorded(o, r));
        this.ready = new Promise((resolve) => { this.markReady = resolve; });
    }
    /** task registers the handler of a task type; the worker leases only the types it has handlers for. */
    task(type, handler) {
        checkString('type', type);
        checkFunction('handler', handler);
        if (this.handlers.has(type))
            throw invalid('type', `${JSON.stringify(type)} has a handler already`);
        this.handlers.set(type, handler);
        this.types = [...this.handlers.keys()];
        return this;
    }
    /** How many handlers run now. */
    get busy() {
        return this.active.size;
    }
    /**
     * run leases and runs tasks until stop() (or SIGTERM/SIGINT), then stops
     * gracefully: no more leases, running handlers get graceSeconds to finish
     * (those still running then are aborted and given back as a retryable
     * failure), every outcome is recorded, and run resolves. It rejects at once
     * on an error no retry mends (401, a refused lease request: bad queue name).
     */
    run() {
        if (this.running || this.finished)
            return Promise.reject(new Error('dtq: Worker.run was called already'));
        if (this.handlers.size === 0)
            return Promise.reject(invalid('handlers', 'are none: register one with worker.task(type, handler) before run()'));
        this.running = true;
        this.finished = this.loopAndDrain();
        return this.finished;
    }
    /** stop begins a graceful stop (see run) and resolves when run() does. */
    stop() {
        this.beginStop();
        return this.finished ?? Promise.resolve();
    }
    async loopAndDrain() {
        const off = this.handleSignals ? this.installSignals() : () => { };
        try {
            await this.leaseLoop();
        }
        finally {
            this.beginStop();
            await this.drain();
            off();
            this.running = false;
            this.http.close();
            this.onEvent('stopped', { worker: this.name });
        }
    }
    beginStop() {
        if (this.stopping)
            return;
        this.stopping = true;
        this.stopped.abort();
        // The long poll in flight is abandoned a moment later, not at once: an
        // answer already on its way holds leases the server has started, which
        // would otherwise run nowhere until their lease time ran out. What it
        // brings is run and reported, as every running task is on a stop.
        const poll = this.poll;
        if (poll)
            setTimeout(() => poll.abort(), abandonPollMs).unref();
        this.wake();
    }
    installSignals() {
        const onSignal = () => {
            if (this.stopping)
                this.graceOver.abort(); // a second signal: no more grace
            else
                this.beginStop();
        };
        process.on('SIGTERM', onSignal);
        process.on('SIGINT', onSignal);
        return () => {
            process.off('SIGTERM', onSignal);
            process.off('SIGINT', onSignal);
        };
    }
    async leaseLoop() {
        let backoff = 100;
        while (!this.stopping) {
            const free = this.concurrency - this.active.size;
            if (free <= 0) {
                await new Promise((resolve) => { this.slotWaiter = resolve; });
                continue;
            }
            const poll = new AbortController();
            this.poll = poll;
            const body = {
                worker: this.name, queues: this.queues, task_types: this.types, max: Math.min(free, 100),
                wait_seconds: this.pollSeconds, lease_seconds: this.leaseSeconds,
                library: LIBRARY, concurrency: this.concurrency, busy: this.active.size,
            };
            let leases;
            try {
                const pending = this.http.request('POST', '/api/v1/leases', body, { timeoutSeconds: this.pollSeconds + 15, signal: poll.signal });
                this.stats.leaseCalls++;
                this.markReady();
                if (!this.saidReady) {
                    this.saidReady = true;
                    this.onEvent('ready', { worker: this.name, url: this.http.url });
                }
                leases = (await pending).body.leases;
                backoff = 100;
            }
            catch (e) {
                if (this.stopping)
                    break;
                if (e instanceof DtqError && e.status >= 400 && e.status < 500 && e.status !== 429)
                    throw e; // no retry mends it
                this.onError(e);
                await pause(backoff, this.stopped.signal);
                backoff = Math.min(backoff * 2, 5000);
                continue;
            }
            finally {
                this.poll = null;
            }
            for (const l of leases)
                this.start(l);
        }
    }
    /** start runs a leased task's handler, with its lease's extension and the task's timeout. */
    start(l) {
        this.stats.leased++;
        const task = taskFromWire(l.task);
        this.onEvent('leased', { task: task.id, type: task.taskType, attempt: task.attempt });
        const run = new Run(l.lease, task, this.http, this.leaseMs);
        run.onLost = (on) => this.onEvent('lost', { task: task.id, on });
        this.active.add(run);
        run.extendTimer = setTimeout(() => void this.extend(run), this.leaseMs / 4);
        if (task.timeoutSeconds > 0)
            run.timeoutTimer = setTimeout(() => this.timeOut(run), task.timeoutSeconds * 1000);
        const handler = this.handlers.get(task.taskType);
        let p;
        try {
            if (!handler)
                throw new Permanent(`no handler for task type ${JSON.stringify(task.taskType)} in this worker`);
            p = Promise.resolve(handler(task.payload, new TaskContext(run, task)));
        }
        catch (e) {
            p = Promise.reject(e);
        }
        run.done = p.then((result) => this.decide(run, completion(result)), (err) => this.decide(run, failure(run, err))).finally(() => {
            this.active.delete(run);
            this.wake();
        });
    }
    /** decide records run's outcome, unless it was decided already, its lease is lost or it suspended. */
    decide(run, o) {
        if (run.decided)
            return;
        run.decided = true;
        run.stopTimers();
        if (run.lost) {
            this.stats.lost++;
            return;
        }
        if (run.suspended || o === null) {
            this.stats.suspended++;
            this.onEvent('suspended', { task: run.task.id });
            return;
        }
        this.reporter.add({ ...o, lease: run.token, taskId: run.task.id, deadline: Date.now() + this.leaseMs });
    }
    /** extend renews run's lease every quarter of the lease's time while the handler runs. */
    async extend(run) {
        if (run.decided)
            return;
        try {
            const a = await this.http.request('POST', `/api/v1/leases/${encodeURIComponent(run.token)}/extend`);
            if (a.body.cancel_requested && !run.cancelled) {
                run.cancelled = true;
                this.onEvent('cancel_seen', { task: run.task.id });
                run.abort('cancelled', "the task's cancellation was requested");
            }
        }
        catch (e) {
            if (e instanceof LeaseLostError) {
                run.lose('extend');
                return;
            }
            this.onError(e); // tried again at the next tick, before the lease runs out
        }
        if (!run.decided && !run.lost)
            run.extendTimer = setTimeout(() => void this.extend(run), this.leaseMs / 4);
    }
    /** timeOut ends a task whose timeout passed: its signal aborts and it fails, retryably, with "timeout". */
    timeOut(run) {
        if (run.decided)
            return;
        this.onEvent('timeout', { task: run.task.id });
        run.abort('timeout', `the task's timeout (${run.task.timeoutSeconds} s) passed`);
        this.decide(run, { kind: 'fail', error: 'timeout', class: 'retryable' });
    }
    /** drain lets running handlers finish within the grace period, gives back the rest, records every outcome. */
    async drain() {
        if (this.active.size > 0) {
            const all = Promise.all([...this.active].map((r) => r.done));
            await Promise.race([all, pause(this.graceMs, this.graceOver.signal)]);
        }
        for (const run of this.active) {
            if (run.decided)
                continue;
            run.abort('stopping', 'the worker is stopping and its grace period passed');
            this.decide(run, {
                kind: 'fail', class: 'retryable', retryAfterSeconds: 0,
                error: 'the worker stopped before the handler ended (its grace period passed): given back',
            });
        }
        await this.reporter.idle();
    }
    recorded(o, r) {
        if (r.error instanceof LeaseLostError) {
            this.stats.lost++;
            this.onEvent('lost', { task: o.taskId, on: o.kind });
        }
        else if (r.error) {
            this.stats.unrecorded++;
            this.onError(new DtqError(r.error.code, r.error.status, `task ${o.taskId}: its outcome was not recorded: ${r.error.message}`));
        }
        else if (o.kind === 'complete') {
            this.stats.completed++;
            this.onEvent('done', { task: o.taskId, status: r.status });
        }
        else {
            this.stats.failed++;
            this.onEvent('failed', { task: o.taskId, status: r.status });
        }
    }
    wake() {
        const w = this.slotWaiter;
        this.slotWaiter = null;
        w?.();
    }
}
/**
 * completion is the outcome of a handler that returned result (undefined is
 * null): its JSON, encoded here so that one result that cannot be encoded (a
 * BigInt, a cycle) fails its own task — DEAD, as a Go worker records it —
 * and not the report it would share with others.
 */
function completion(result) {
    let json;
    try {
        json = JSON.stringify(result === undefined ? null : result);
    }
    catch (e) {
        return { kind: 'fail', class: 'permanent', error: `result cannot be encoded as JSON: ${message(e)}` };
    }
    if (json === undefined)
        return { kind: 'fail', class: 'permanent', error: `result cannot be encoded as JSON: a ${typeof result}` };
    return { kind: 'complete', resultJson: json };
}
/** failure is the outcome of a handler that threw err (null: it suspended, or its lease is lost). */
function failure(run, err) {
    if (run.suspended && isSuspended(err))
        return null;
    if (err instanceof Permanent)
        return { kind: 'fail', error: message(err), class: 'permanent' };
    if (err instanceof RetryAfter)
        return { kind: 'fail', error: message(err), class: 'retryable', retryAfterSeconds: err.seconds };
    return { kind: 'fail', error: message(err), class: 'retryable' };
}
function message(err) {
    if (err instanceof Error)
        return err.message || err.name || 'error';
    if (typeof err === 'string')
        return err || 'error';
    try {
        return JSON.stringify(err) ?? String(err);
    }
    catch {
        return String(err);
    }
}
/** pause waits ms, or less when signal aborts. */
function pause(ms, signal) {
    return new Promise((resolve) => {
        if (signal.aborted)
            return resolve();
        const done = () => {
            clearTimeout(t);
            signal.removeEventListener('abort', done);
            resolve();
        };
        const t = setTimeout(done, ms);
        signal.addEventListener('abort', done, { once: true });
    });
}
