#!/usr/bin/env node
// A dtq worker in Node.js, on the standard library alone (fetch, Node 18+).
//
// It leases tasks over dtq's HTTP API (docs/workers.md), runs each with the
// handler of its task type, extends the lease while the handler runs (and
// learns so of a cancellation), then completes or fails it. A lease lost
// meanwhile (409) is dropped: another worker owns the task.
//
//   node worker.js --url http://localhost:8000 --queues default --concurrency 4
//
// --url defaults to $DTQ_API_URL, else http://localhost:8000 (where `dtq
// serve` listens), and $DTQ_API_KEY is sent as X-API-Key: the variables the
// dtq CLI reads.
//
// A handler is an async function (task, ctx) returning a JSON-encodable
// result, or throwing: a Permanent error sends the task to the dead letters
// at once, a RetryAfter one retries it no sooner than its seconds, any other
// error is retried with backoff. ctx.signal aborts on a cancellation or a
// lost lease; ctx.progress(fraction, note) reports how far it got. It prints
// one JSON line per event on standard output: ready, leased, done, failed,
// lost, cancel_seen.
//
// The example handlers are the Go binary's (examples/tasks), with the same
// payloads and results, so a task gives the same answer whoever runs it:
// echo, sleep {"seconds"}, flaky {"fail_times"}, always_fail {"permanent"}.
'use strict';

class Permanent extends Error {}
class RetryAfter extends Error {
  constructor(seconds, message) {
    super(message);
    this.seconds = seconds;
  }
}

// sleep waits ms, or rejects when signal aborts.
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) return reject(new Error('cancelled'));
    const t = setTimeout(resolve, ms);
    if (signal) signal.addEventListener('abort', () => { clearTimeout(t); reject(new Error('cancelled')); }, { once: true });
  });
}

// payload is the task's payload; an absent one (null) is {}.
function payload(task) {
  const p = task.payload;
  if (p === null || p === undefined) return {};
  if (typeof p !== 'object' || Array.isArray(p)) throw new Permanent('payload: must be a JSON object');
  return p;
}

// The example handlers: those of the Go binary (examples/tasks/tasks.go),
// with the same payloads and results.
const handlers = {
  // returns {"echo": payload, "attempt": n}
  echo: async (task) => ({ echo: task.payload, attempt: task.attempt }),
  // sleeps payload.seconds (default 1, 0-3600), ending early on a cancellation
  sleep: async (task, ctx) => {
    const secs = 'seconds' in payload(task) ? payload(task).seconds : 1;
    if (typeof secs !== 'number' || secs < 0 || secs > 3600) {
      throw new Permanent(`seconds must be 0-3600, got ${JSON.stringify(secs)}`);
    }
    await ctx.progress(0, `sleeping ${secs} s`);
    await sleep(secs * 1000, ctx.signal);
    return { slept_seconds: secs };
  },
  // fails its first payload.fail_times attempts (default 2), then succeeds
  // (asking for a retry after 50 ms, where the Go handler takes the default
  // backoff)
  flaky: async (task) => {
    const n = 'fail_times' in payload(task) ? payload(task).fail_times : 2;
    if (task.attempt <= n) throw new RetryAfter(0.05, `flaky: failing attempt ${task.attempt} of the first ${n}`);
    return { succeeded_on_attempt: task.attempt };
  },
  // fails every attempt; with payload.permanent the failure is permanent
  always_fail: async (task) => {
    if (payload(task).permanent) throw new Permanent('always_fail: this task always fails');
    throw new Error('always_fail: this task always fails');
  },
};

function emit(event, fields = {}) {
  process.stdout.write(JSON.stringify({ ...fields, event }) + '\n');
}

function args() {
  const out = {
    url: process.env.DTQ_API_URL || 'http://localhost:8000', worker: `node-${process.pid}`, queues: 'default',
    types: '', concurrency: 4, leaseSeconds: 30,
  };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, '').replace(/-(.)/g, (_, c) => c.toUpperCase());
    if (!(k in out)) throw new Error(`unknown flag ${argv[i]}`);
    out[k] = typeof out[k] === 'number' ? Number(argv[i + 1]) : argv[i + 1];
  }
  return out;
}

class Worker {
  constructor(o) {
    this.o = o;
    this.url = o.url.replace(/\/$/, '');
    this.queues = o.queues.split(',');
    this.types = o.types ? o.types.split(',') : Object.keys(handlers).sort();
    this.running = 0;
  }

  // post POSTs body as JSON and returns [status, answer]; a failure to
  // connect throws.
  async post(path, body, timeoutMs = 30000) {
    const headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (process.env.DTQ_API_KEY) headers['X-API-Key'] = process.env.DTQ_API_KEY;
    const res = await fetch(this.url + path, {
      method: 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let ans = null;
    try { ans = text ? JSON.parse(text) : null; } catch { ans = { error: { message: text } }; }
    return [res.status, ans];
  }

  async run() {
    emit('ready', { worker: this.o.worker, url: this.url });
    for (;;) {
      const free = this.o.concurrency - this.running;
      if (free <= 0) {
        await sleep(10);
        continue;
      }
      let leases = [];
      try {
        const body = { worker: this.o.worker, queues: this.queues, task_types: this.types, max: free, wait_seconds: 5,
          lease_seconds: this.o.leaseSeconds };
        const [status, ans] = await this.post('/api/v1/leases', body, 40000);
        if (status !== 200) {
          emit('error', { status, error: ans && ans.error && ans.error.message });
          await sleep(1000);
          continue;
        }
        leases = ans.leases;
      } catch (e) {
        emit('error', { error: String(e) });
        await sleep(1000);
        continue;
      }
      for (const lease of leases) {
        this.running++;
        this.execute(lease).finally(() => { this.running--; });
      }
    }
  }

  async execute(lease) {
    const { lease: token, task } = lease;
    emit('leased', { task: task.id, type: task.task_type, attempt: task.attempt });
    const abort = new AbortController();
    const ctx = {
      signal: abort.signal, cancelled: false, lost: false,
      // progress reports how far the task got (0-1): shown while it runs; a
      // report that cannot be made is dropped (progress is a hint)
      progress: async (fraction, note = '') => {
        try {
          const [status] = await this.post(`/api/v1/leases/${token}/progress`, { fraction, note });
          if (status === 409 && !ctx.lost) {
            ctx.lost = true;
            emit('lost', { task: task.id, on: 'progress' });
            abort.abort();
          }
        } catch {
          // dropped
        }
      },
    };
    let done = false;
    const stop = new AbortController(); // ends the extender's wait
    const extender = (async () => {
      // every quarter of the lease's time, as a Go worker renews
      while (!done) {
        try {
          await sleep(this.o.leaseSeconds * 250, stop.signal);
        } catch {
          return;
        }
        try {
          const [status, ans] = await this.post(`/api/v1/leases/${token}/extend`);
          if (status === 409) {
            if (!ctx.lost) {
              ctx.lost = true;
              emit('lost', { task: task.id, on: 'extend' });
              abort.abort();
            }
            return;
          }
          if (status === 200 && ans.cancel_requested && !ctx.cancelled) {
            ctx.cancelled = true;
            emit('cancel_seen', { task: task.id });
            abort.abort();
          }
        } catch {
          // the next try, before the deadline
        }
      }
    })();
    let verb, body;
    try {
      const fn = handlers[task.task_type];
      if (!fn) throw new Permanent(`no handler for task type ${JSON.stringify(task.task_type)} in this worker`);
      const result = await fn(task, ctx);
      [verb, body] = ['complete', { result: result === undefined ? null : result }];
    } catch (e) {
      if (e instanceof Permanent) [verb, body] = ['fail', { error: e.message, class: 'permanent' }];
      else if (e instanceof RetryAfter) [verb, body] = ['fail', { error: e.message, class: 'retryable', retry_after_seconds: e.seconds }];
      else [verb, body] = ['fail', { error: `${e.name}: ${e.message}`, class: 'retryable' }];
    }
    done = true;
    stop.abort();
    await extender;
    if (ctx.lost) return;
    await this.report(token, task, verb, body);
  }

  async report(token, task, verb, body) {
    const deadline = Date.now() + this.o.leaseSeconds * 1000;
    for (;;) {
      let status = 0, ans = null;
      try {
        [status, ans] = await this.post(`/api/v1/leases/${token}/${verb}`, body);
      } catch (e) {
        ans = { error: { message: String(e) } };
      }
      if (status === 200) return emit(verb === 'complete' ? 'done' : 'failed', { task: task.id, status: ans.status });
      if (status === 409) return emit('lost', { task: task.id, on: verb });
      if (Date.now() > deadline) return emit('error', { task: task.id, status, error: ans && ans.error && ans.error.message });
      await sleep(200); // Redis or the server away: try again (recording twice is harmless)
    }
  }
}

module.exports = { args, handlers };

if (require.main === module) {
  new Worker(args()).run().catch((e) => {
    emit('error', { error: String(e) });
    process.exit(1);
  });
}
