// The Worker against a real dtq serve: outcomes, retries, progress,
// cancellation, timeouts, durable steps, sleeps, signals and children,
// graceful stop, batch leasing, and a lost lease dropped.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as dtq from '../dist/index.js';
import { client, delta, eventually, queue, requestCounts, sleep, startProxy, startWorker, url, waitStatus } from './helpers.mjs';

const { Permanent, RetryAfter, LIBRARY } = dtq;

test('batch leasing: 200 queued tasks succeed once, in few lease calls; the worker is listed', async () => {
  const c = client();
  const q = queue();
  const res = await c.submitMany(Array.from({ length: 200 }, (_, i) => ({ type: 'echo', payload: { i }, queue: q })));
  const name = `ts-batch-${q}`;
  const before = await requestCounts();
  const w = await startWorker(q, { echo: (p, ctx) => ({ echo: p, attempt: ctx.attempt }) }, { concurrency: 50, name });
  try {
    await eventually('200 tasks succeed', async () => (await c.queues.get(q)).succeededTotal === 200);
    const me = (await c.workers()).find((x) => x.id === `http:${name}`);
    assert.ok(me, 'the worker is in GET /api/v1/workers');
    assert.equal(me.kind, 'http');
    assert.equal(me.library, LIBRARY);
    assert.equal(me.concurrency, 50);
    assert.deepEqual(me.queues, [q]);
  } finally {
    await w.stop();
  }
  for (const r of res.slice(0, 20)) {
    const t = await c.get(r.task.id);
    assert.equal(t.status, 'SUCCEEDED');
    assert.deepEqual(t.result, { echo: r.task.payload, attempt: 1 });
    assert.equal(t.history.length, 1);
    assert.equal(t.worker, `http:${name}`);
  }
  assert.equal(w.worker.stats.leased, 200);
  assert.equal(w.worker.stats.completed, 200);
  assert.ok(w.worker.stats.leaseCalls < 50, `${w.worker.stats.leaseCalls} lease calls for 200 tasks: not in batches`);
  const after = await requestCounts();
  const leases = delta(before, after, 'POST /api/v1/leases');
  const outcomes = delta(before, after, 'POST /api/v1/leases/outcomes');
  assert.ok(leases >= 1 && leases < 50, `the server counted ${leases} lease calls for 200 tasks`);
  assert.ok(outcomes >= 2 && outcomes < 50, `the server counted ${outcomes} outcome calls for 200 tasks: not in batches`);
  assert.equal(delta(before, after, 'POST /api/v1/leases/{lease}/complete'), 0, 'no outcome went alone');
  assert.equal(delta(before, after, 'POST /api/v1/leases/{lease}/extend'), 0, 'no extension of quick tasks');
  assert.deepEqual(w.errors, []);
});

test('a server without the batch route gets one complete or fail per lease', async () => {
  // As a server older than the route: 404 for POST /api/v1/leases/outcomes.
  const proxy = await startProxy((req, res) => {
    if (req.url !== '/api/v1/leases/outcomes') return false;
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end('{"error":{"code":"not_found","message":"no such route"}}');
    return true;
  });
  const c = client();
  const q = queue();
  const w = await startWorker(q, { echo: (p) => p, no: () => { throw new Permanent('no'); } }, { url: proxy.url });
  try {
    const ok = await c.submit('echo', 'fine', { queue: q });
    const no = await c.submit('no', null, { queue: q });
    assert.equal((await waitStatus(c, ok.id, 'SUCCEEDED')).result, 'fine');
    assert.equal((await waitStatus(c, no.id, 'DEAD')).lastError, 'no');
    const more = await c.submit('echo', 'again', { queue: q });
    await waitStatus(c, more.id, 'SUCCEEDED');
  } finally {
    await w.stop();
    proxy.close();
  }
  const count = (re) => proxy.seen.filter((s) => re.test(s)).length;
  assert.equal(count(/^POST \/api\/v1\/leases\/outcomes$/), 1, 'the batch route is tried once');
  assert.equal(count(/^POST \/api\/v1\/leases\/[^/]+\/complete$/), 2);
  assert.equal(count(/^POST \/api\/v1\/leases\/[^/]+\/fail$/), 1);
});

test('an outcome report is retried while the server cannot be reached', async () => {
  // The first two outcome reports lose their connection before any answer.
  let cut = 2;
  const proxy = await startProxy((req, res) => {
    if (req.url !== '/api/v1/leases/outcomes' || cut === 0) return false;
    cut--;
    res.socket.destroy();
    return true;
  });
  const c = client();
  const q = queue();
  const w = await startWorker(q, { echo: (p) => p }, { url: proxy.url, leaseSeconds: 10 });
  try {
    const t = await c.submit('echo', 'reported', { queue: q });
    assert.equal((await waitStatus(c, t.id, 'SUCCEEDED')).result, 'reported');
  } finally {
    await w.stop();
    proxy.close();
  }
  assert.equal(proxy.seen.filter((s) => s === 'POST /api/v1/leases/outcomes').length, 3, 'two cut, the third recorded');
  assert.equal(w.worker.stats.completed, 1);
  assert.equal(w.worker.stats.unrecorded, 0);
});

test('retryable, permanent and retry-after failures', async () => {
  const c = client();
  const q = queue();
  const w = await startWorker(q, {
    flaky: (p, ctx) => {
      if (ctx.attempt <= 2) throw new Error(`flaky on attempt ${ctx.attempt}`);
      return { attempt: ctx.attempt };
    },
    doomed: () => { throw new Permanent('doomed for good'); },
    later: (p, ctx) => {
      if (ctx.attempt === 1) throw new RetryAfter(1.2, 'not yet');
      return 'now';
    },
    thrower: () => { throw 'a string, not an Error'; }, // eslint-disable-line no-throw-literal
  });
  try {
    const flaky = await c.submit('flaky', null, { queue: q });
    const doomed = await c.submit('doomed', null, { queue: q });
    const later = await c.submit('later', null, { queue: q });
    const thrower = await c.submit('thrower', null, { queue: q, maxAttempts: 1 });

    const f = await waitStatus(c, flaky.id, 'SUCCEEDED', 20000);
    assert.equal(f.attempt, 3);
    assert.deepEqual(f.result, { attempt: 3 });
    assert.deepEqual(f.history.map((h) => h.outcome), ['retried', 'retried', 'succeeded']);
    assert.deepEqual(f.history.map((h) => h.error ?? ''), ['flaky on attempt 1', 'flaky on attempt 2', '']);

    const d = await waitStatus(c, doomed.id, 'DEAD');
    assert.equal(d.attempt, 1);
    assert.equal(d.lastError, 'doomed for good');

    const l = await waitStatus(c, later.id, 'SUCCEEDED', 20000);
    assert.equal(l.attempt, 2);
    const gap = l.history[1].startedAt - l.history[0].finishedAt;
    assert.ok(gap >= 1150, `the retry started ${gap} ms after the failure, sooner than the 1.2 s asked`);

    const t = await waitStatus(c, thrower.id, 'DEAD');
    assert.equal(t.lastError, 'a string, not an Error');
  } finally {
    await w.stop();
  }
});

test('a result that cannot be encoded as JSON fails its own task only', async () => {
  const c = client();
  const q = queue();
  const res = await c.submitMany([
    { type: 'bigint', queue: q },
    ...Array.from({ length: 10 }, (_, i) => ({ type: 'echo', payload: i, queue: q })),
  ]);
  const w = await startWorker(q, { bigint: () => ({ n: 1n }), echo: (p) => p }, { concurrency: 20 });
  try {
    const bad = await waitStatus(c, res[0].task.id, 'DEAD');
    assert.equal(bad.attempt, 1);
    assert.match(bad.lastError, /^result cannot be encoded as JSON: .*BigInt/);
    for (const r of res.slice(1)) assert.equal((await waitStatus(c, r.task.id, 'SUCCEEDED')).result, r.task.payload);
  } finally {
    await w.stop();
  }
});

test('progress shows on the running task', async () => {
  const c = client();
  const q = queue();
  let release;
  const gate = new Promise((r) => { release = r; });
  const w = await startWorker(q, {
    slow: async (p, ctx) => {
      await ctx.progress(0.5, 'half');
      await gate;
      return 'done';
    },
  });
  try {
    const t = await c.submit('slow', null, { queue: q });
    const seen = await eventually('progress shows', async () => (await c.get(t.id)).progress);
    assert.equal(seen.fraction, 0.5);
    assert.equal(seen.note, 'half');
    assert.ok(seen.at instanceof Date);
    release();
    const done = await waitStatus(c, t.id, 'SUCCEEDED');
    assert.equal(done.progress, undefined, 'progress is deleted when the execution ends');
  } finally {
    release();
    await w.stop();
  }
});

test('cancellation aborts ctx.signal through the lease extension', async () => {
  const c = client();
  const q = queue();
  let seen;
  const w = await startWorker(q, {
    long: (p, ctx) => new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve('slept'), 30_000);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(t);
        seen = { cancelled: ctx.cancelled, code: ctx.signal.reason.code };
        reject(new Error('cancelled'));
      });
    }),
    echo: (p) => p,
  }, { concurrency: 1, leaseSeconds: 1 });
  try {
    const t = await c.submit('long', null, { queue: q });
    await waitStatus(c, t.id, 'RUNNING');
    const started = Date.now();
    await c.cancel(t.id);
    const done = await waitStatus(c, t.id, 'CANCELLED', 10000);
    assert.ok(Date.now() - started < 5000, 'cancelled long before the handler would have ended');
    assert.deepEqual(seen, { cancelled: true, code: 'cancelled' });
    assert.equal(done.attempt, 1);
    const next = await c.submit('echo', 'free again', { queue: q });
    assert.equal((await waitStatus(c, next.id, 'SUCCEEDED')).result, 'free again', 'the slot is free again');
  } finally {
    await w.stop();
  }
});

test("the task's timeout aborts the handler and fails it with \"timeout\"", async () => {
  const c = client();
  const q = queue();
  let reason;
  const w = await startWorker(q, {
    stuck: (p, ctx) => new Promise((resolve, reject) => {
      ctx.signal.addEventListener('abort', () => { reason = ctx.signal.reason.code; reject(new Error('aborted')); });
    }),
  });
  try {
    const t = await c.submit('stuck', null, { queue: q, timeoutSeconds: 0.5, maxAttempts: 1 });
    const d = await waitStatus(c, t.id, 'DEAD', 10000);
    assert.equal(d.lastError, 'timeout');
    assert.equal(d.attempt, 1);
    assert.equal(reason, 'timeout');
    assert.ok(d.history[0].finishedAt - d.history[0].startedAt < 3000, 'it failed at its timeout');
  } finally {
    await w.stop();
  }
});

test('durable steps: a recorded step is skipped on the retry', async () => {
  const c = client();
  const q = queue();
  const w = await startWorker(q, {
    steps: async (p, ctx) => {
      const ran = [];
      const one = await ctx.step('one', () => { ran.push('one'); return { n: 1 }; });
      if (ctx.attempt === 1) throw new RetryAfter(0.1, 'failing between the steps');
      const two = await ctx.step('two', async () => { ran.push('two'); return { n: 2 }; });
      const again = await ctx.step('one', () => { ran.push('one again'); return { n: 99 }; });
      return { one, two, again, ran };
    },
  });
  try {
    const t = await c.submit('steps', null, { queue: q });
    const d = await waitStatus(c, t.id, 'SUCCEEDED', 15000);
    assert.equal(d.attempt, 2);
    assert.deepEqual(d.result, { one: { n: 1 }, two: { n: 2 }, again: { n: 1 }, ran: ['two'] });
    assert.deepEqual(d.steps.map((s) => [s.name, s.run]), [['one', 1], ['two', 2]]);
  } finally {
    await w.stop();
  }
});

test("a step's record is retried while the server cannot be reached", async () => {
  // The first PUT of a step loses its connection before any answer.
  let cut = 1;
  const proxy = await startProxy((req, res) => {
    if (req.method !== 'PUT' || !req.url.includes('/steps/') || cut === 0) return false;
    cut--;
    res.socket.destroy();
    return true;
  });
  const c = client();
  const q = queue();
  let runs = 0;
  const w = await startWorker(q, {
    once: async (p, ctx) => ctx.step('charge', () => { runs++; return { charged: 5 }; }),
  }, { url: proxy.url });
  try {
    const t = await c.submit('once', null, { queue: q });
    const d = await waitStatus(c, t.id, 'SUCCEEDED');
    assert.deepEqual(d.result, { charged: 5 });
    assert.equal(d.attempt, 1, 'the cut record did not fail the task');
    assert.equal(runs, 1);
    assert.deepEqual(d.steps.map((s) => s.name), ['charge']);
  } finally {
    await w.stop();
    proxy.close();
  }
  assert.equal(proxy.seen.filter((s) => s.startsWith('PUT ')).length, 2, 'one cut, one recorded');
});

test('durable sleep suspends the task and frees the slot; it ends on its first attempt', async () => {
  const c = client();
  const q = queue();
  const w = await startWorker(q, {
    nap: async (p, ctx) => {
      await ctx.sleep('nap', 1.5);
      return { napped: true, attempt: ctx.attempt };
    },
    echo: (p) => p,
  }, { concurrency: 1 });
  try {
    const nap = await c.submit('nap', null, { queue: q });
    const s = await eventually('the nap suspends', async () => (await c.get(nap.id)).suspended);
    assert.equal(s.for, 'sleep');
    assert.equal(s.name, 'nap');
    const echo = await c.submit('echo', 'meanwhile', { queue: q });
    await waitStatus(c, echo.id, 'SUCCEEDED');
    assert.equal((await c.get(nap.id)).status, 'SCHEDULED', 'the echo ran while the nap slept, on the one slot');
    const d = await waitStatus(c, nap.id, 'SUCCEEDED', 15000);
    assert.deepEqual(d.result, { napped: true, attempt: 1 });
    assert.deepEqual(d.history.map((h) => h.outcome), ['suspended', 'succeeded']);
    assert.ok(w.worker.stats.suspended >= 1);
  } finally {
    await w.stop();
  }
});

test('waitFor gets the signal, or times out', async () => {
  const c = client();
  const q = queue();
  const w = await startWorker(q, {
    wait: async (p, ctx) => {
      const got = await ctx.waitFor('go', { timeoutSeconds: p.timeout });
      return got.timedOut ? { timed_out: true } : { signal: got.payload };
    },
  });
  try {
    const t = await c.submit('wait', { timeout: 60 }, { queue: q });
    await eventually('the wait suspends', async () => (await c.get(t.id)).suspended?.for === 'signal');
    await c.signal(t.id, 'go', { ok: [1, 2] });
    const d = await waitStatus(c, t.id, 'SUCCEEDED');
    assert.deepEqual(d.result, { signal: { ok: [1, 2] } });
    assert.equal(d.attempt, 1);

    const early = await c.submit('wait', { timeout: 60 }, { queue: q, delaySeconds: 0.3 });
    await c.signal(early.id, 'go', 'early');
    assert.deepEqual((await waitStatus(c, early.id, 'SUCCEEDED')).result, { signal: 'early' }, 'a signal sent before the wait is kept for it');

    const late = await c.submit('wait', { timeout: 0.5 }, { queue: q });
    assert.deepEqual((await waitStatus(c, late.id, 'SUCCEEDED', 15000)).result, { timed_out: true });
  } finally {
    await w.stop();
  }
});

test('ctx.child submits a child once and returns how it ended', async () => {
  const c = client();
  const q = queue();
  let parentRuns = 0;
  const w = await startWorker(q, {
    parent: async (p, ctx) => {
      parentRuns++;
      const end = await ctx.child('thumb', 'double', 21, { queue: q });
      return { child: end.status, result: end.result, id: end.taskId };
    },
    double: (n) => n * 2,
  });
  try {
    const t = await c.submit('parent', null, { queue: q });
    const d = await waitStatus(c, t.id, 'SUCCEEDED', 20000);
    assert.equal(d.result.child, 'SUCCEEDED');
    assert.equal(d.result.result, 42);
    assert.equal((await c.get(d.result.id)).taskType, 'double');
    assert.equal(d.attempt, 1);
    assert.ok(parentRuns >= 2, 'the parent suspended while the child ran');
    assert.equal((await c.list({ queue: q, type: 'double' })).tasks.length, 1, 'one child');
  } finally {
    await w.stop();
  }
});

test('graceful stop: the running handler finishes and is recorded; no new task is taken', async () => {
  const c = client();
  const q = queue();
  let started;
  const isStarted = new Promise((r) => { started = r; });
  const w = await startWorker(q, {
    slow: async () => { started(); await sleep(800); return 'finished'; },
  }, { graceSeconds: 10 });
  const t = await c.submit('slow', null, { queue: q });
  await isStarted;
  const stopping = w.stop();
  await sleep(150); // the poll in flight is abandoned 100 ms after the stop (an answer on its way is taken)
  const after = await c.submit('slow', null, { queue: q });
  await stopping;
  const d = await c.get(t.id);
  assert.equal(d.status, 'SUCCEEDED', 'recorded before run() resolved');
  assert.equal(d.result, 'finished');
  assert.equal(d.crashes, 0);
  await sleep(300);
  assert.equal((await c.get(after.id)).status, 'QUEUED', 'the task submitted after stop() was not taken');
});

test('graceful stop: a handler still running after the grace period is given back', async () => {
  const c = client();
  const q = queue();
  let started;
  const isStarted = new Promise((r) => { started = r; });
  const w = await startWorker(q, {
    stubborn: async () => { started(); await sleep(4000); return 'too late'; },
  }, { graceSeconds: 0.3 });
  const t = await c.submit('stubborn', null, { queue: q, maxAttempts: 3 });
  await isStarted;
  const begun = Date.now();
  await w.stop();
  assert.ok(Date.now() - begun < 2500, `stop took ${Date.now() - begun} ms with a grace of 0.3 s`);
  const d = await c.get(t.id);
  assert.notEqual(d.status, 'RUNNING');
  assert.equal(d.history[0].outcome, 'retried');
  assert.match(d.history[0].error, /grace period/);
});

test('a lost lease is dropped: a frozen worker loses its task to another and goes on', async () => {
  const c = client();
  const q = queue();
  const script = fileURLToPath(new URL('./conformance-worker.mjs', import.meta.url));
  const child = spawn(process.execPath, [script, '--url', url(), '--queues', q, '--concurrency', '2', '--lease-seconds', '1',
    '--worker', `frozen-${q}`, '--grace-seconds', '5'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const events = [];
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (l) => events.push(JSON.parse(l)));
  const exited = new Promise((r) => child.on('exit', (code, sig) => r({ code, sig })));
  let other;
  try {
    await eventually('the conformance worker is ready', () => events.some((e) => e.event === 'ready'), 20000);
    const t = await c.submit('sleep', { seconds: 2.5 }, { queue: q });
    await eventually('the frozen worker runs it', async () => (await c.get(t.id)).worker === `http:frozen-${q}`);
    child.kill('SIGSTOP');
    other = await startWorker(q, { sleep: async (p) => { await sleep(p.seconds * 1000); return { slept: p.seconds, by: 'other' }; } },
      { name: `taker-${q}`, leaseSeconds: 1 });
    await eventually('another worker takes it over', async () => (await c.get(t.id)).worker === `http:taker-${q}`, 20000);
    child.kill('SIGCONT');
    const d = await waitStatus(c, t.id, 'SUCCEEDED', 20000);
    assert.deepEqual(d.result, { slept: 2.5, by: 'other' });
    assert.equal(d.attempt, 1);
    const echo = await c.submit('echo', 'after the thaw', { queue: q });
    await waitStatus(c, echo.id, 'SUCCEEDED');
    child.kill('SIGTERM');
    const { code } = await exited;
    assert.equal(code, 0);
    const stopped = events.at(-1);
    assert.equal(stopped.event, 'stopped', 'stopped is the last line');
    assert.ok(stopped.stats.lost >= 1, `the frozen worker dropped its lost lease: ${JSON.stringify(stopped.stats)}`);
    assert.equal((await c.get(t.id)).status, 'SUCCEEDED', 'one terminal state');
  } finally {
    child.kill('SIGKILL');
    await other?.stop();
  }
});
