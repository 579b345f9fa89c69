#!/usr/bin/env node
// The TypeScript library's conformance worker (conformance/README.md): the
// library's built dist/ with the conformance handlers, its flags, and its JSON
// lines on standard output ({"event": "ready"} once it polls for work,
// {"event": "stopped"} as the last line of a graceful stop).
//
//   node clients/typescript/test/conformance-worker.mjs --url URL --queues a,b \
//     [--types t1,t2] [--concurrency 4] [--lease-seconds 30] [--worker NAME] [--grace-seconds 10]

import { appendFileSync } from 'node:fs';
import { Permanent, RetryAfter, Worker } from '../dist/index.js';

const starts = process.env.DTQ_BENCH_STARTS;

const emit = (event, fields = {}) => process.stdout.write(JSON.stringify({ event, ...fields }) + '\n');

/** flags parses the conformance flags (--name value; --redis is the Go worker's and ignored). */
function flags(argv) {
  const out = { url: undefined, redis: '', queues: 'default', types: '', concurrency: '4', leaseSeconds: '30', worker: '', graceSeconds: '10' };
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i]);
    if (!m) throw new Error(`unexpected argument ${argv[i]}`);
    const key = m[1].replace(/-(.)/g, (_, c) => c.toUpperCase());
    if (!(key in out)) throw new Error(`unknown flag --${m[1]}`);
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new Error(`flag --${m[1]} needs a value`);
    out[key] = value;
  }
  return out;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** sleepFor sleeps in slices of ≤ 50 ms, failing with "cancelled" once the task's signal aborts (cancel, timeout). */
async function sleepFor(seconds, ctx) {
  const end = Date.now() + seconds * 1000;
  for (;;) {
    if (ctx.signal.aborted) throw new Error('cancelled');
    const left = end - Date.now();
    if (left <= 0) return;
    await sleep(Math.min(50, left));
  }
}

/** obj is a payload as an object: an absent field takes its default. */
const obj = (p) => (p !== null && typeof p === 'object' && !Array.isArray(p) ? p : {});

const handlers = {
  echo: (payload, ctx) => {
    // bench/httpworkers' latency run: "<task id> <unix time>" as it starts
    if (starts) appendFileSync(starts, `${ctx.task.id} ${((performance.timeOrigin + performance.now()) / 1000).toFixed(6)}\n`);
    return { echo: payload, attempt: ctx.attempt };
  },

  fail: (payload, ctx) => {
    const p = obj(payload);
    const n = ctx.attempt;
    if (p.times === undefined || n <= p.times) {
      const msg = `fail on attempt ${n}`;
      if (p.permanent) throw new Permanent(msg);
      if (p.retry_after !== undefined) throw new RetryAfter(p.retry_after, msg);
      throw new Error(msg);
    }
    return { attempt: n };
  },

  sleep: async (payload, ctx) => {
    const seconds = obj(payload).seconds ?? 1;
    await sleepFor(seconds, ctx);
    return { slept: seconds };
  },

  // reports its progress, then sleeps `seconds` (default 0), as the Go conformance worker's
  progress: async (payload, ctx) => {
    await ctx.progress(0.5, 'half');
    await sleepFor(obj(payload).seconds ?? 0, ctx);
    return { progressed: true };
  },

  steps: async (payload, ctx) => {
    const ran = [];
    const one = await ctx.step('one', () => { ran.push('one'); return { n: 1 }; });
    if (ctx.attempt === 1 && obj(payload).fail_between) throw new RetryAfter(0.1, 'failing between the steps');
    const two = await ctx.step('two', () => { ran.push('two'); return { n: 2 }; });
    return { one, two, ran };
  },

  nap: async (payload, ctx) => {
    await ctx.sleep('nap', obj(payload).seconds ?? 1);
    return { napped: true, attempt: ctx.attempt };
  },

  wait: async (payload, ctx) => {
    const got = await ctx.waitFor('go', { timeoutSeconds: obj(payload).timeout ?? 60 });
    return got.timedOut ? { timed_out: true } : { signal: got.payload };
  },
};

async function main() {
  const f = flags(process.argv.slice(2));
  const worker = new Worker({
    ...(f.url ? { url: f.url } : {}),
    queues: f.queues.split(',').filter(Boolean),
    concurrency: Number(f.concurrency),
    leaseSeconds: Number(f.leaseSeconds),
    graceSeconds: Number(f.graceSeconds),
    ...(f.worker ? { name: f.worker } : {}),
    onError: (e) => process.stderr.write(`conformance-worker: ${e instanceof Error ? e.message : String(e)}\n`),
  });
  const types = f.types ? f.types.split(',').filter(Boolean) : Object.keys(handlers);
  for (const t of types) {
    if (!handlers[t]) throw new Error(`--types: no handler ${t} (have ${Object.keys(handlers).join(', ')})`);
    worker.task(t, handlers[t]);
  }
  const running = worker.run();
  await Promise.race([worker.ready, running]);
  emit('ready', { worker: worker.name });
  await running;
  emit('stopped', { stats: worker.stats });
  process.exit(0);
}

main().catch((e) => {
  process.stderr.write(`conformance-worker: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
