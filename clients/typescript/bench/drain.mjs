#!/usr/bin/env node
// A rough drain measurement: N echo tasks queued first, then drained by one
// Worker at concurrency C over HTTP. Against a `dtq serve` of your own (not a
// shared one): it submits to the queue it names.
//
//   DTQ_API_URL=http://127.0.0.1:8000 node bench/drain.mjs [N=5000] [C=50] [queue=ts-drain]

import { Client, Worker } from '../dist/index.js';

const n = Number(process.argv[2] ?? 5000);
const concurrency = Number(process.argv[3] ?? 50);
const queue = process.argv[4] ?? `ts-drain-${process.pid}`;

const client = new Client();
for (let i = 0; i < n; i += 1000) {
  const items = [];
  for (let j = i; j < Math.min(n, i + 1000); j++) items.push({ type: 'echo', payload: { i: j }, queue });
  const res = await client.submitMany(items);
  const bad = res.find((r) => r.error);
  if (bad) throw bad.error;
}
/** outcomeCalls reads the server's count of POST /api/v1/leases/outcomes calls. */
async function outcomeCalls() {
  const text = await (await fetch(`${client.url}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^dtq_http_requests_total\{[^}]*route="POST \/api\/v1\/leases\/outcomes"[^}]*\} (\d+)/gm)) n += Number(m[1]);
  return n;
}
const outcomesBefore = await outcomeCalls();
const worker = new Worker({ queues: [queue], concurrency, handleSignals: false });
worker.task('echo', (payload, ctx) => ({ echo: payload, attempt: ctx.attempt }));
const start = process.hrtime.bigint();
const running = worker.run();
await new Promise((resolve) => {
  const t = setInterval(() => {
    if (worker.stats.completed + worker.stats.failed >= n) {
      clearInterval(t);
      resolve();
    }
  }, 2);
});
const secs = Number(process.hrtime.bigint() - start) / 1e9;
await worker.stop();
await running;
const q = await client.queues.get(queue);
console.log(JSON.stringify({ tasks: n, concurrency, seconds: +secs.toFixed(3), per_second: Math.round(n / secs),
  succeeded: q.succeededTotal, lease_calls: worker.stats.leaseCalls, outcome_calls: (await outcomeCalls()) - outcomesBefore }));
