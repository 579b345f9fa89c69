#!/usr/bin/env node
// A dtq worker in Node.js, on the dtq library (clients/typescript, docs/typescript.md).
//
//   npm install ./clients/typescript        # or run it from the checkout as is
//   node worker.mjs --url http://localhost:8000 --queues default --concurrency 4
//
// --url defaults to $DTQ_API_URL, else http://localhost:8000 (where `dtq
// serve` listens); $DTQ_API_KEY is sent as X-API-Key. It prints one JSON
// line per event: ready, leased, done, failed, lost, cancel_seen (and stopped).
//
// Its handlers are the Go binary's (examples/tasks), with the same payloads
// and results, so a task gives the same answer whoever runs it: echo, sleep
// {"seconds"}, flaky {"fail_times"}, always_fail {"permanent"}.
import { pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker, Permanent, RetryAfter } from '../../../clients/typescript/dist/index.js';

// fields is the payload as an object (null is {}).
function fields(payload) {
  if (payload === null || payload === undefined) return {};
  if (typeof payload !== 'object' || Array.isArray(payload)) throw new Permanent('payload: must be a JSON object');
  return payload;
}

export const handlers = {
  echo: async (payload, ctx) => ({ echo: payload, attempt: ctx.attempt }),
  sleep: async (payload, ctx) => {
    const secs = 'seconds' in fields(payload) ? payload.seconds : 1;
    if (typeof secs !== 'number' || secs < 0 || secs > 3600) throw new Permanent(`seconds must be 0-3600, got ${JSON.stringify(secs)}`);
    await ctx.progress(0, `sleeping ${secs} s`);
    await sleep(secs * 1000, undefined, { signal: ctx.signal }); // rejects on a cancellation
    return { slept_seconds: secs };
  },
  flaky: async (payload, ctx) => {
    const n = 'fail_times' in fields(payload) ? payload.fail_times : 2;
    if (ctx.attempt <= n) throw new RetryAfter(0.05, `flaky: failing attempt ${ctx.attempt} of the first ${n}`);
    return { succeeded_on_attempt: ctx.attempt };
  },
  always_fail: async (payload) => {
    if (fields(payload).permanent) throw new Permanent('always_fail: this task always fails');
    throw new Error('always_fail: this task always fails');
  },
};

// args is the command line with its defaults.
export function args(argv = process.argv.slice(2)) {
  const out = { url: process.env.DTQ_API_URL || 'http://localhost:8000', worker: `node-${process.pid}`, queues: 'default', concurrency: 4, leaseSeconds: 30 };
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, '').replace(/-(.)/g, (_, c) => c.toUpperCase());
    if (!(k in out)) throw new Error(`unknown flag ${argv[i]}`);
    out[k] = typeof out[k] === 'number' ? Number(argv[i + 1]) : argv[i + 1];
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const a = args();
  const worker = new Worker({
    url: a.url, queues: a.queues.split(','), concurrency: a.concurrency, leaseSeconds: a.leaseSeconds, name: a.worker,
    onEvent: (event, f) => process.stdout.write(JSON.stringify({ ...f, event }) + '\n'),
  });
  for (const [type, fn] of Object.entries(handlers)) worker.task(type, fn);
  await worker.run();
}
