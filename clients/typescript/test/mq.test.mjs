// The MessageQueue against a real dtq serve: put and receive (text and
// bytes), ack, nak, term, release, extend, keys, topic counts, dead letters.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as dtq from '../dist/index.js';
import { eventually, queue, url } from './helpers.mjs';

const { MessageQueue } = dtq;

function mq(name, opts = {}) {
  return new MessageQueue(name, { url: url(), worker: 'ts-test', ...opts });
}

test('put, receive and ack; text and bytes', async () => {
  const m = mq(queue('mq'));
  assert.deepEqual(await m.put('orders', 'order 1', { key: 'o-1' }), { published: true });
  assert.deepEqual(await m.put('orders', 'order 1 again', { key: 'o-1' }), { published: false }, 'the key is live');
  const bytes = new Uint8Array([0, 255, 1, 254, 0xc3]); // not UTF-8
  assert.deepEqual(await m.put('orders', bytes), { published: true });
  const got = await m.receive({ topics: ['orders'], max: 10, waitSeconds: 1 });
  assert.equal(got.length, 2);
  const [a, b] = got;
  assert.equal(a.text(), 'order 1');
  assert.equal(a.key, 'o-1');
  assert.equal(a.topic, 'orders');
  assert.equal(a.deliveries, 1);
  assert.ok(a.data instanceof Uint8Array);
  assert.deepEqual([...b.data], [...bytes], 'bytes round-trip');
  assert.ok(b.key !== '' && b.key !== 'o-1', 'a message put without a key gets one of its own');
  assert.ok(a.deadline instanceof Date && a.deadline > new Date());
  const before = a.deadline;
  await new Promise((r) => setTimeout(r, 20));
  assert.ok((await a.extend()) > before, 'extend moves the deadline');
  await a.ack();
  await b.ack();
  await assert.rejects(a.ack(), (e) => e instanceof dtq.LeaseLostError && e.status === 409, 'settled already');
  const stats = await m.topic('orders');
  assert.deepEqual([stats.topic, stats.queued, stats.inFlight, stats.delayed], ['orders', 0, 0, 0]);
  assert.deepEqual(await m.put('orders', 'order 1 once more', { key: 'o-1' }), { published: true }, 'the key is free after the ack');
  const json = mq(queue('mq'));
  await json.put('j', JSON.stringify({ n: 1 }));
  const [j] = await json.receive({ topics: ['j'], waitSeconds: 1 });
  assert.deepEqual(j.json(), { n: 1 });
  await j.ack();
});

test('nak redelivers after its delay; release gives back at once; term dead-letters', async () => {
  const m = mq(queue('mq'));
  await m.put('jobs', 'flaky');
  let [msg] = await m.receive({ topics: ['jobs'], waitSeconds: 1 });
  await msg.nak({ delaySeconds: 0.5 });
  const delayed = await m.topic('jobs');
  assert.equal(delayed.delayed, 1);
  assert.deepEqual(await m.receive({ topics: ['jobs'] }), [], 'not before its delay');
  [msg] = await eventually('redelivered', async () => (await m.receive({ topics: ['jobs'], waitSeconds: 2 }))[0], 5000).then((x) => [x]);
  assert.equal(msg.text(), 'flaky');
  assert.equal(msg.deliveries, 2);

  await msg.release();
  [msg] = await m.receive({ topics: ['jobs'], waitSeconds: 1 });
  assert.equal(msg.text(), 'flaky', 'released: available again at once');

  await msg.release('retry-later');
  [msg] = await m.receive({ topics: ['retry-later'], waitSeconds: 1 });
  assert.equal(msg.text(), 'flaky', 'released to another topic');

  await msg.term({ reason: 'poison' });
  const dead = await m.dead();
  assert.equal(dead.length, 1);
  assert.equal(dead[0].reason, 'poison');
  assert.equal(dead[0].topic, 'retry-later');
  assert.equal(Buffer.from(dead[0].data).toString(), 'flaky');
});

test('a lease not settled in time goes to the next consumer of the group', async () => {
  const name = queue('mq');
  const a = mq(name, { worker: 'a', leaseSeconds: 0.5 });
  const b = mq(name, { worker: 'b', leaseSeconds: 0.5 });
  await a.put('t', 'once');
  const [first] = await a.receive({ topics: ['t'], waitSeconds: 1 });
  const second = await eventually('b takes it over', async () => (await b.receive({ topics: ['t'], waitSeconds: 1 }))[0], 10000);
  assert.equal(second.deliveries, 2);
  await assert.rejects(first.ack(), dtq.LeaseLostError);
  await second.ack();
  await assert.rejects(mq(name, { group: 'a b' }).receive({ topics: ['t'] }),
    (e) => e instanceof dtq.InvalidError && e.field === 'group', 'the group is sent');
});

test('a full topic is a TopicFullError; bad names are InvalidError', async () => {
  const m = mq(queue('mq'));
  await m.put('small', 'one', { maxSize: 1 });
  await assert.rejects(m.put('small', 'two', { maxSize: 1 }), (e) => e instanceof dtq.TopicFullError && e.status === 429);
  await assert.rejects(m.put('a b', 'x'), (e) => e instanceof dtq.InvalidError && e.status === 400 && e.field === 'topic');
});
