// What the library decides alone, without a server: its checks of bad input
// (each error names the field), the error class of every API error code, and
// its version.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as dtq from '../dist/index.js';
import { errorFromAnswer } from '../dist/errors.js';

const { Client, Worker, MessageQueue, InvalidError, DtqError, task, chain, parallel } = dtq;

/** refused checks that fn throws (or rejects with) an InvalidError naming field, before any call. */
async function refused(fn, field) {
  let err;
  try {
    await fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof InvalidError, `want an InvalidError naming ${field}, got ${err}`);
  assert.equal(err.field, field, err.message);
  assert.equal(err.status, 0, 'refused by the library, not the server');
  assert.equal(err.code, 'invalid_field');
  assert.ok(err.message.startsWith(field), err.message);
}

// A URL nothing listens on: any call that got through would fail with a ConnectionError instead.
const c = new Client({ url: 'http://127.0.0.1:9' });

test('bad input names its field', async () => {
  await refused(() => new Client({ url: 'localhost:8000/x y' }), 'url');
  await refused(() => new Client({ url: 'ftp://x' }), 'url');
  await refused(() => new Client({ urll: 'http://x' }), 'urll');
  await refused(() => c.submit('', 1), 'type');
  await refused(() => c.submit('echo', 1, { priority: 12 }), 'priority');
  await refused(() => c.submit('echo', 1, { priority: 1.5 }), 'priority');
  await refused(() => c.submit('echo', 1, { maxAttempts: 0 }), 'maxAttempts');
  await refused(() => c.submit('echo', 1, { timeoutSeconds: 0 }), 'timeoutSeconds');
  await refused(() => c.submit('echo', 1, { delaySeconds: -1 }), 'delaySeconds');
  await refused(() => c.submit('echo', 1, { delaySeconds: 1, runAt: new Date() }), 'runAt');
  await refused(() => c.submit('echo', 1, { runAt: 'yesterday-ish' }), 'runAt');
  await refused(() => c.submit('echo', 1, { queue: '' }), 'queue');
  await refused(() => c.submit('echo', 1, { queueName: 'x' }), 'queueName');
  await refused(() => c.submit('echo', 1, { unique: { key: 'k', states: ['DONE'] } }), 'unique.states');
  await refused(() => c.submit('echo', 1, { unique: true, idempotencyKey: 'k' }), 'idempotencyKey');
  await refused(() => c.submit('echo', 1, { orderKey: '' }), 'orderKey');
  await refused(() => c.submit('echo', 1, { orderKey: 7 }), 'orderKey');
  await refused(() => c.submit('echo', 1, { orderKey: 'k', unique: true }), 'orderKey');
  const d = { key: 'doc-1', periodSeconds: 2 };
  await refused(() => c.submit('echo', 1, { debounce: 'doc-1' }), 'debounce');
  await refused(() => c.submit('echo', 1, { debounce: { periodSeconds: 2 } }), 'debounce.key');
  await refused(() => c.submit('echo', 1, { debounce: { key: 'k' } }), 'debounce.periodSeconds');
  await refused(() => c.submit('echo', 1, { debounce: { key: 'k', periodSeconds: 0 } }), 'debounce.periodSeconds');
  await refused(() => c.submit('echo', 1, { debounce: { ...d, maxWaitSeconds: -1 } }), 'debounce.maxWaitSeconds');
  await refused(() => c.submit('echo', 1, { debounce: { ...d, keepFirst: 'yes' } }), 'debounce.keepFirst');
  await refused(() => c.submit('echo', 1, { debounce: { ...d, period: 2 } }), 'debounce.period');
  for (const other of [{ unique: true }, { orderKey: 'k' }, { delaySeconds: 1 }, { runAt: new Date() }]) {
    await refused(() => c.submit('echo', 1, { debounce: d, ...other }), 'debounce');
  }
  await refused(() => c.submit('echo', 1, { debounce: d, idempotencyKey: 'k' }), 'idempotencyKey');
  await refused(() => c.submitMany([{ type: 'echo', debounce: { ...d, periodSeconds: '2' } }]), 'tasks[0].debounce.periodSeconds');
  await refused(() => c.submitMany([]), 'items');
  await refused(() => c.submitMany([{ type: 'echo' }, { payload: 1 }]), 'tasks[1].type');
  await refused(() => c.submitMany([{ type: 'echo', idempotencyKey: 'k' }]), 'tasks[0].idempotencyKey');
  await refused(() => c.list({ limit: 501 }), 'limit');
  await refused(() => c.list({ suspended: 'yes' }), 'suspended');
  await refused(() => c.get(''), 'id');
  await refused(() => c.signal('t', ''), 'name');
  await refused(() => c.workflows.submit(chain(task('a'), { task: { type: 'b' }, chain: [] })), 'root.chain[1]');
  await refused(() => c.workflows.submit(parallel([task('a', null, { priority: 10 })])), 'root.parallel[0].task.priority');
  await refused(() => c.schedules.put('q', 's', { cron: '@every 1m', type: 'echo', missed: 'never' }), 'definition.missed');
  await refused(() => c.deadLetters.redrive({ limit: 0 }), 'limit');
  await refused(() => new Worker({ queues: [] }), 'queues');
  await refused(() => new Worker({ queues: ['q'], concurrency: 0 }), 'concurrency');
  await refused(() => new Worker({ queues: ['q'], leaseSeconds: 0 }), 'leaseSeconds');
  await refused(() => new Worker({ queues: ['q'], pollSeconds: 30 }), 'pollSeconds');
  await refused(() => new Worker({ queues: ['q'], concurency: 4 }), 'concurency');
  await refused(() => new Worker({ queues: ['q'] }).task('a', () => 1).task('a', () => 2), 'type');
  await refused(() => new Worker({ queues: ['q'] }).task('a', 'not a function'), 'handler');
  await refused(() => new Worker({ queues: ['q'] }).run(), 'handlers');
  const mq = new MessageQueue('m', { url: 'http://127.0.0.1:9' });
  await refused(() => mq.put('t', 42), 'data');
  await refused(() => mq.receive({ topics: [] }), 'topics');
  await refused(() => mq.receive({ topics: ['t'], max: 101 }), 'max');
});

test('an unreachable server is a ConnectionError (status 0)', async () => {
  await assert.rejects(c.get('x'), (e) => e instanceof dtq.ConnectionError && e.status === 0 && e.code === 'connection_failed');
});

test('every error code of the API has its own class', () => {
  const spec = JSON.parse(readFileSync(new URL('../../../api/openapi.json', import.meta.url), 'utf8'));
  const codes = spec.components.schemas.ErrorCode.enum;
  assert.ok(codes.length >= 20, 'the ErrorCode enum of api/openapi.json');
  const seen = new Set();
  for (const code of codes) {
    const e = errorFromAnswer(409, { code, message: 'm', task_id: 'default-1' }, '3');
    assert.ok(e instanceof DtqError, code);
    assert.notEqual(e.constructor, DtqError, `${code} maps to a subclass`);
    assert.ok(!seen.has(e.constructor), `${code}: ${e.constructor.name} is another code's class`);
    seen.add(e.constructor);
    assert.equal(e.code, code);
    assert.equal(e.name, e.constructor.name);
    assert.equal(e.taskId, 'default-1');
    assert.equal(e.retryAfterSeconds, 3);
    assert.ok(dtq[e.constructor.name] === e.constructor, `${e.constructor.name} is exported`);
  }
  assert.ok(errorFromAnswer(404, { code: 'not_found', message: 'no such task' }) instanceof dtq.NotFoundError);
  assert.ok(errorFromAnswer(409, { code: 'lease_lost', message: '' }) instanceof dtq.LeaseLostError);
  assert.ok(errorFromAnswer(503, { code: 'out_of_memory', message: '' }) instanceof dtq.UnavailableError, 'out_of_memory is a kind of unavailable');
  const unknown = errorFromAnswer(418, { code: 'teapot', message: 'short and stout' });
  assert.equal(unknown.constructor, DtqError);
  assert.equal(unknown.code, 'teapot');
  assert.ok(errorFromAnswer(502, undefined) instanceof dtq.UnavailableError, "a proxy's 502 without the error shape");
});

test('InvalidError reads the field the server names first', () => {
  const f = (message) => errorFromAnswer(400, { code: 'invalid_field', message }).field;
  assert.equal(f('priority must be an integer from 0 to 9 (got 12)'), 'priority');
  assert.equal(f('root.chain[1].parallel[0].task.priority must be an integer from 0 to 9 (got 12)'), 'root.chain[1].parallel[0].task.priority');
  assert.equal(f('the Idempotency-Key header must be at most 256 bytes'), 'Idempotency-Key');
  assert.equal(f('Queue is not a known field (field names are case-sensitive: did you mean "queue"?)'), 'Queue');
});

test('handler errors', () => {
  assert.equal(new dtq.RetryAfter(1.5, 'later').seconds, 1.5);
  assert.throws(() => new dtq.RetryAfter(-1, 'x'), /seconds/);
  assert.ok(new dtq.Permanent('no') instanceof Error);
  assert.ok(dtq.isSuspended(new dtq.Suspended('s')));
  assert.ok(!dtq.isSuspended(new Error('s')));
});

test('the version is package.json\'s', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  assert.equal(dtq.VERSION, pkg.version);
  assert.equal(dtq.LIBRARY, `dtq-typescript/${pkg.version}`);
  assert.equal(pkg.name, 'dtq');
  assert.deepEqual(Object.keys(pkg.dependencies ?? {}), [], 'no runtime dependency');
});

test('the client reads DTQ_API_URL and defaults to localhost:8000', () => {
  const saved = process.env.DTQ_API_URL;
  try {
    delete process.env.DTQ_API_URL;
    assert.equal(new Client().url, 'http://localhost:8000');
    process.env.DTQ_API_URL = 'http://127.0.0.1:9/';
    assert.equal(new Client().url, 'http://127.0.0.1:9');
    assert.equal(new Client({ url: 'http://h:1' }).url, 'http://h:1');
  } finally {
    if (saved === undefined) delete process.env.DTQ_API_URL;
    else process.env.DTQ_API_URL = saved;
  }
});
