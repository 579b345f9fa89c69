// The Client against a real dtq serve: submissions with their options, reads,
// lists, cancel, signals, workflows, schedules, dead letters, queues, workers,
// and the typed errors of the server's answers.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as dtq from '../dist/index.js';
import { client, eventually, queue, startWorker, url, waitStatus } from './helpers.mjs';

const { Client, task, chain, parallel } = dtq;

test('submit with every option, then get', async () => {
  const c = client();
  const q = queue();
  const before = Date.now();
  const t = await c.submit('resize', { image: 'cat.png' }, {
    queue: q, priority: 7, delaySeconds: 60, maxAttempts: 3, timeoutSeconds: 12.5, group: 'tenant-a', limitKey: 'acct-1',
  });
  assert.match(t.id, new RegExp(`^${q}-`));
  assert.equal(t.queue, q);
  assert.equal(t.taskType, 'resize');
  assert.deepEqual(t.payload, { image: 'cat.png' });
  assert.equal(t.priority, 7);
  assert.equal(t.status, 'SCHEDULED');
  assert.equal(t.maxAttempts, 3);
  assert.equal(t.timeoutSeconds, 12.5);
  assert.equal(t.group, 'tenant-a');
  assert.equal(t.limitKey, 'acct-1');
  assert.equal(t.attempt, 0);
  assert.equal(t.duplicate, false);
  assert.ok(t.createdAt instanceof Date && t.createdAt.getTime() >= before - 5000);
  assert.ok(t.scheduledAt.getTime() >= before + 55_000, `scheduled at ${t.scheduledAt.toISOString()}`);

  const got = await c.get(t.id);
  assert.equal(got.id, t.id);
  assert.equal(got.status, 'SCHEDULED');
  assert.deepEqual(got.history, []);

  const at = new Date(Date.now() + 3600_000);
  const later = await c.submit('resize', null, { queue: q, runAt: at });
  assert.equal(later.status, 'SCHEDULED');
  assert.ok(Math.abs(later.scheduledAt.getTime() - at.getTime()) < 5000, `runAt ${at.toISOString()} → ${later.scheduledAt.toISOString()}`);
  const now = await c.submit('resize', null, { queue: q, runAt: new Date(Date.now() - 1000) });
  assert.equal(now.status, 'QUEUED', 'a runAt past runs at once');
});

test('idempotency keys and unique tasks answer the first task', async () => {
  const c = client();
  const q = queue();
  const key = `order-${q}`;
  const first = await c.submit('email', { to: 'a' }, { queue: q, idempotencyKey: key });
  await assert.rejects(c.submit('email', { to: 'a' }, { queue: q, idempotencyKey: key }),
    (e) => e instanceof dtq.InProgressError && e.status === 409 && e.taskId === first.id);
  await assert.rejects(c.submit('email', { to: 'b' }, { queue: q, idempotencyKey: key }),
    (e) => e instanceof dtq.IdempotencyKeyReusedError && e.status === 422 && e.taskId === first.id);

  const u1 = await c.submit('sync', { acct: 1 }, { queue: q, unique: { key: 'acct-1', periodSeconds: 60 } });
  const u2 = await c.submit('sync', { acct: 1 }, { queue: q, unique: { key: 'acct-1', periodSeconds: 60 } });
  assert.equal(u2.id, u1.id);
  assert.equal(u2.duplicate, true);
  const u3 = await c.submit('sync', { acct: 2 }, { queue: q, unique: true });
  assert.notEqual(u3.id, u1.id);
});

test('order keys: a key\'s later tasks wait for the earlier ones, then run in order', async () => {
  const c = client();
  const q = queue();
  const a = await c.submit('o', 1, { queue: q, orderKey: 'acct-1' });
  const b = await c.submit('o', 2, { queue: q, orderKey: 'acct-1' });
  const other = await c.submit('o', 3, { queue: q, orderKey: 'acct-2' });
  assert.deepEqual([a.orderKey, a.orderWaiting, a.status], ['acct-1', false, 'QUEUED']);
  assert.deepEqual([b.orderKey, b.orderWaiting, b.status], ['acct-1', true, 'QUEUED']);
  assert.equal(other.orderWaiting, false, 'keys are independent');
  assert.equal((await c.get(b.id)).orderWaiting, true);
  const st = await c.queues.get(q);
  assert.deepEqual([st.orderWaiting, st.queued], [1, 3]);
  await assert.rejects(c.submit('o', 4, { queue: q, orderKey: 'bad key' }), (e) => e instanceof dtq.InvalidError && e.status === 400 && e.field === 'order_key');

  const ran = [];
  let running = 0;
  let most = 0;
  const d = await c.submit('o', 4, { queue: q, orderKey: 'acct-1' });
  const w = await startWorker(q, {
    o: async (p) => {
      if (p === 3) return p;
      ran.push(p);
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 50));
      running--;
      return p;
    },
  });
  try {
    for (const t of [a, b, d, other]) await waitStatus(c, t.id, 'SUCCEEDED');
  } finally {
    await w.stop();
  }
  assert.deepEqual(ran, [1, 2, 4], 'in submission order');
  assert.equal(most, 1, 'one at a time');
  assert.equal((await c.queues.get(q)).orderWaiting, 0);
});

test('debounce: a submission while the key\'s task is pending joins it', async () => {
  const c = client();
  const q = queue();
  const first = await c.submit('d', { v: 1 }, { queue: q, debounce: { key: 'doc-1', periodSeconds: 60, maxWaitSeconds: 600 } });
  assert.deepEqual([first.status, first.debounced, first.duplicate], ['SCHEDULED', false, false]);
  const joined = await c.submit('d', { v: 2 }, { queue: q, debounce: { key: 'doc-1', periodSeconds: 60 } });
  assert.deepEqual([joined.id, joined.debounced, joined.payload], [first.id, true, { v: 2 }], 'the last payload wins');
  const kept = await c.submit('d', { v: 3 }, { queue: q, debounce: { key: 'doc-1', periodSeconds: 60, keepFirst: true } });
  assert.deepEqual([kept.id, kept.debounced, kept.payload], [first.id, true, { v: 2 }], 'keepFirst keeps the pending payload');
  assert.deepEqual((await c.get(first.id)).payload, { v: 2 });
  const other = await c.submit('d', null, { queue: q, debounce: { key: 'doc-2', periodSeconds: 60 } });
  assert.notEqual(other.id, first.id);

  // A batch: the item that creates the task is 201, the one that joins it 200 (the server runs a
  // batch's debounced items side by side, so which is which is not the items' order).
  const res = await c.submitMany([
    { type: 'd', queue: q, debounce: { key: 'doc-3', periodSeconds: 60 } },
    { type: 'd', queue: q, debounce: { key: 'doc-3', periodSeconds: 60 } },
  ]);
  assert.deepEqual(res.map((r) => [r.status, r.task.debounced]).sort(), [[200, true], [201, false]]);
  assert.equal(res[0].task.id, res[1].task.id);

  // The server's ranges, named its way.
  await assert.rejects(c.submit('d', null, { queue: q, debounce: { key: 'k', periodSeconds: 10, maxWaitSeconds: 5 } }),
    (e) => e instanceof dtq.InvalidError && e.status === 400 && e.field === 'debounce.max_wait_seconds');

  // Once the task came due and ran, the next submission creates a new one.
  const short = await c.submit('d', null, { queue: q, debounce: { key: 'doc-4', periodSeconds: 0.2 } });
  const w = await startWorker(q, { d: (p) => p });
  try {
    await waitStatus(c, short.id, 'SUCCEEDED');
  } finally {
    await w.stop();
  }
  const again = await c.submit('d', null, { queue: q, debounce: { key: 'doc-4', periodSeconds: 60 } });
  assert.notEqual(again.id, short.id);
  assert.equal(again.debounced, false);
});

test('submitMany: each item stands alone', async () => {
  const c = client();
  const q = queue();
  const res = await c.submitMany([
    { type: 'a', payload: 1, queue: q },
    { type: 'b', payload: { x: [1, 2] }, queue: q, priority: 9, delaySeconds: 30 },
    { type: 'c', queue: 'no such/queue' },
  ]);
  assert.equal(res.length, 3);
  assert.equal(res[0].status, 201);
  assert.equal(res[0].task.taskType, 'a');
  assert.equal(res[1].task.priority, 9);
  assert.equal(res[1].task.status, 'SCHEDULED');
  assert.equal(res[2].status, 400);
  assert.ok(res[2].error instanceof dtq.InvalidError, String(res[2].error));
  assert.equal(res[2].error.field, 'queue');
  assert.equal((await c.get(res[0].task.id)).payload, 1);
});

test('list with filters, and iterate through the pages', async () => {
  const c = client();
  const q = queue();
  const res = await c.submitMany(Array.from({ length: 7 }, (_, i) => ({ type: i % 2 ? 'odd' : 'even', payload: i, queue: q })));
  await c.submit('later', null, { queue: q, delaySeconds: 600 });
  const all = await c.list({ queue: q, limit: 500 });
  assert.equal(all.tasks.length, 8);
  assert.equal(all.nextCursor, '');
  const odd = await c.list({ queue: q, type: 'odd' });
  assert.deepEqual(odd.tasks.map((t) => t.payload).sort(), [1, 3, 5]);
  const scheduled = await c.list({ queue: q, status: 'SCHEDULED' });
  assert.deepEqual(scheduled.tasks.map((t) => t.taskType), ['later']);
  const byId = await c.list({ queue: q, idPrefix: res[3].task.id });
  assert.deepEqual(byId.tasks.map((t) => t.id), [res[3].task.id]);
  assert.equal((await c.list({ queue: q, createdBefore: new Date(Date.now() - 3600_000) })).tasks.length, 0);
  assert.equal((await c.list({ queue: q, createdAfter: new Date(Date.now() - 3600_000) })).tasks.length, 8);
  assert.equal((await c.list({ queue: q, suspended: true })).tasks.length, 0);
  const page = await c.list({ queue: q, limit: 3 });
  assert.equal(page.tasks.length, 3);
  assert.notEqual(page.nextCursor, '');
  const seen = [];
  for await (const t of c.iterate({ queue: q, limit: 3 })) seen.push(t.id);
  assert.equal(new Set(seen).size, 8);
  await assert.rejects(c.list({ queue: q, cursor: 'bogus' }), (e) => e instanceof dtq.InvalidError && e.field === 'cursor');
});

test('typed errors from the server', async () => {
  const c = client();
  const q = queue();
  await assert.rejects(c.get(`${q}-01M8M67VYQCTATQE2HSYY9GCZX`), (e) => e instanceof dtq.NotFoundError && e.status === 404 && e.code === 'not_found');
  await assert.rejects(c.submit('x', 1, { queue: 'a b' }), (e) => e instanceof dtq.InvalidError && e.status === 400 && e.field === 'queue');
  await assert.rejects(c.submit('x', 1, { queue: q, timeoutSeconds: 10 ** 9 }),
    (e) => e instanceof dtq.InvalidError && e.field === 'timeout_seconds', 'the server names the field as the API spells it');
  await assert.rejects(c.queues.get(`${q}-none`), (e) => e instanceof dtq.NotFoundError);
  const t = await c.submit('x', 1, { queue: q });
  await c.cancel(t.id);
  const again = await c.cancel(t.id);
  assert.equal(again.status, 'CANCELLED');
  await assert.rejects(c.signal(t.id, 'go', 1), (e) => e instanceof dtq.TaskFinishedError && e.status === 409);
  await assert.rejects(c.deadLetters.requeue(t.id), (e) => e instanceof dtq.NotDeadError);
  await c.submit('x', 2, { queue: q });
  await assert.rejects(c.queues.delete(q), (e) => e instanceof dtq.QueueNotEmptyError && /1 queued/.test(e.message));
});

test('a server with an API key: UnauthorizedError without it, success with it', async () => {
  const keyed = process.env.DTQ_TEST_KEYED_URL;
  const key = process.env.DTQ_TEST_API_KEY;
  assert.ok(keyed && key, 'DTQ_TEST_KEYED_URL and DTQ_TEST_API_KEY are set by the Go test driver');
  const q = queue();
  await assert.rejects(new Client({ url: keyed }).submit('x', 1, { queue: q }),
    (e) => e instanceof dtq.UnauthorizedError && e.status === 401 && e.code === 'unauthorized');
  await assert.rejects(new Client({ url: keyed, apiKey: 'wrong' }).submit('x', 1, { queue: q }), dtq.UnauthorizedError);
  const t = await new Client({ url: keyed, apiKey: key }).submit('x', 1, { queue: q });
  assert.equal(t.status, 'QUEUED');
  const saved = process.env.DTQ_API_KEY;
  process.env.DTQ_API_KEY = key;
  try {
    assert.equal((await new Client({ url: keyed }).cancel(t.id)).status, 'CANCELLED', '$DTQ_API_KEY is the default key');
  } finally {
    if (saved === undefined) delete process.env.DTQ_API_KEY;
    else process.env.DTQ_API_KEY = saved;
  }
});

test('workflows: submit, get, cancel', async () => {
  const c = client();
  const q = queue();
  const wf = await c.workflows.submit(chain(
    task('fetch', { url: 'a' }),
    parallel([task('transcode', '720p', { priority: 8 }), task('transcode', '1080p')], { onSuccess: task('publish') }),
  ), { queue: q });
  assert.match(wf.id, /./);
  assert.equal(wf.queue, q);
  assert.equal(wf.status, 'RUNNING');
  assert.equal(wf.progress.total, 4);
  assert.equal(wf.root.kind, 'chain');
  assert.equal(wf.root.nodes[1].kind, 'parallel');
  assert.equal(wf.root.nodes[1].onSuccess.taskType, 'publish');
  const first = wf.root.nodes[0];
  assert.equal(first.taskType, 'fetch');
  assert.equal((await c.get(first.taskId)).workflow, wf.id);
  assert.equal((await c.workflows.get(wf.id)).id, wf.id);
  const cancelled = await c.workflows.cancel(wf.id);
  assert.equal(cancelled.cancelRequested, true);
  await eventually('the workflow ends CANCELLED', async () => (await c.workflows.get(wf.id)).status === 'CANCELLED');
  await assert.rejects(c.workflows.get(`${q}-nope`), dtq.NotFoundError);

  const key = `wf-${q}`;
  const a = await c.workflows.submit(task('one'), { queue: q, idempotencyKey: key });
  const b = await c.workflows.submit(task('one'), { queue: q, idempotencyKey: key });
  assert.equal(b.id, a.id);
  assert.equal(b.duplicate, true);
});

test('schedules: put, get, list, pause, resume, delete', async () => {
  const c = client();
  const q = queue();
  const s = await c.schedules.put(q, 'nightly', { cron: '30 2 * * *', timeZone: 'Europe/Berlin', type: 'report', payload: { full: true },
    priority: 6, maxAttempts: 2, timeoutSeconds: 60, missed: 'skip' });
  assert.equal(s.name, 'nightly');
  assert.equal(s.queue, q);
  assert.equal(s.cron, '30 2 * * *');
  assert.equal(s.timeZone, 'Europe/Berlin');
  assert.equal(s.taskType, 'report');
  assert.deepEqual(s.payload, { full: true });
  assert.equal(s.priority, 6);
  assert.equal(s.maxAttempts, 2);
  assert.ok(s.nextRun instanceof Date && s.nextRun > new Date());
  assert.equal((await c.schedules.get(q, 'nightly')).cron, '30 2 * * *');
  assert.deepEqual((await c.schedules.list(q)).map((x) => x.name), ['nightly']);
  const paused = await c.schedules.pause(q, 'nightly');
  assert.equal(paused.paused, true);
  assert.equal(paused.nextRun, undefined);
  assert.equal((await c.schedules.resume(q, 'nightly')).paused, false);
  assert.equal(await c.schedules.delete(q, 'nightly'), 'nightly');
  await assert.rejects(c.schedules.get(q, 'nightly'), dtq.NotFoundError);
  await assert.rejects(c.schedules.put(q, 'bad', { cron: 'every now and then', type: 'x' }),
    (e) => e instanceof dtq.InvalidError && e.field === 'cron');
});

test('dead letters: list, requeue, redrive, discard, purge', async () => {
  const c = client();
  const q = queue();
  const w = await startWorker(q, { doomed: (p) => { throw new dtq.Permanent(`doomed ${p}`); } });
  let ids;
  try {
    ids = (await c.submitMany([1, 2, 3, 4].map((i) => ({ type: 'doomed', payload: i, queue: q })))).map((r) => r.task.id);
    for (const id of ids) await waitStatus(c, id, 'DEAD');
  } finally {
    await w.stop();
  }
  const page = await c.deadLetters.list({ queue: q });
  assert.deepEqual(page.deadLetters.map((d) => d.task.id).sort(), [...ids].sort());
  assert.match(page.deadLetters[0].reason, /doomed/);
  assert.ok(page.deadLetters[0].deadAt instanceof Date);

  const requeued = await c.deadLetters.requeue(ids[0]);
  assert.equal(requeued.status, 'QUEUED');
  const dry = await c.deadLetters.redrive({ queue: q, errorContains: 'DOOMED 2', dryRun: true });
  assert.deepEqual([dry.matched, dry.requeued, dry.dryRun, dry.more], [1, 0, true, false]);
  const done = await c.deadLetters.redrive({ queue: q, type: 'doomed', errorContains: 'doomed 2' });
  assert.deepEqual([done.matched, done.requeued], [1, 1]);
  await c.deadLetters.discard(ids[2]);
  assert.deepEqual((await c.deadLetters.list({ queue: q })).deadLetters.map((d) => d.task.id), [ids[3]]);
  assert.equal(await c.deadLetters.purge(q), 1);
  assert.equal((await c.deadLetters.list({ queue: q })).deadLetters.length, 0);
  assert.equal(await c.deadLetters.requeueAll(q), 0);
});

test('queues: list, get, pause, resume, delete; workers', async () => {
  const c = client();
  const q = queue();
  await c.submit('x', 1, { queue: q });
  await c.submit('x', 2, { queue: q, delaySeconds: 300 });
  const s = await c.queues.get(q);
  assert.equal(s.name, q);
  assert.equal(s.queued, 1);
  assert.equal(s.scheduled, 1);
  assert.equal(s.submittedTotal, 2);
  assert.equal(s.queuedByPriority[5], 1);
  assert.ok((await c.queues.list()).some((x) => x.name === q));
  assert.equal((await c.queues.pause(q)).paused, true);
  assert.equal((await c.queues.get(q)).paused, true);
  assert.equal((await c.queues.resume(q)).paused, false);
  const deleted = await c.queues.delete(q, { force: true });
  assert.deepEqual([deleted.queue, deleted.queued, deleted.scheduled], [q, 1, 1]);
  await assert.rejects(c.queues.get(q), dtq.NotFoundError);
  const workers = await c.workers();
  assert.ok(workers.some((w) => w.kind === 'go'), 'dtq serve runs Go workers');
});

test('cancel and signal a task', async () => {
  const c = client();
  const q = queue();
  const t = await c.submit('x', 1, { queue: q });
  const sent = await c.signal(t.id, 'approved', { by: 'ann' });
  assert.deepEqual(sent, { taskId: t.id, name: 'approved', delivered: true });
  await assert.rejects(c.signal(t.id, 'approved', 2), (e) => e instanceof dtq.SignalDeliveredError && e.status === 409);
  const cancelled = await c.cancel(t.id);
  assert.equal(cancelled.status, 'CANCELLED');
  assert.equal(url(), c.url);
});
