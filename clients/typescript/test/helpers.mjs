// Shared by the tests: the server under test (DTQ_API_URL, required), fresh
// queue names, and polling helpers.

import { randomBytes } from 'node:crypto';
import { Client, Worker } from '../dist/index.js';

/** url is the `dtq serve` the tests run against; without it they fail (never skip). */
export function url() {
  const u = process.env.DTQ_API_URL;
  if (!u) throw new Error('DTQ_API_URL is not set: run these tests through `go test ./clients/typescript` (it starts dtq serve), or point DTQ_API_URL at a dtq serve of your own');
  return u;
}

export function client() {
  return new Client({ url: url() });
}

/** queue is a new queue name, so that tests never see each other's tasks. */
export function queue(prefix = 'ts') {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** eventually polls fn until it returns a truthy value (returned), or fails after ms. */
export async function eventually(what, fn, ms = 15000) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await sleep(25);
  }
}

/** waitStatus polls a task until it has status, and returns it. */
export async function waitStatus(c, id, status, ms = 15000) {
  let seen;
  return eventually(`${id} is ${status}`, async () => {
    seen = await c.get(id);
    return seen.status === status ? seen : null;
  }, ms).catch((e) => {
    throw new Error(`${e.message}; it is ${seen?.status} (attempt ${seen?.attempt}, last error ${JSON.stringify(seen?.lastError)})`);
  });
}

/**
 * startWorker runs a Worker on q with handlers ({type: fn}) and opts; it
 * resolves once the worker polls. stop() stops it and resolves when run does.
 */
export async function startWorker(q, handlers, opts = {}) {
  const errors = [];
  const w = new Worker({ url: url(), queues: [q], concurrency: 4, leaseSeconds: 2, graceSeconds: 5, handleSignals: false,
    onError: (e) => errors.push(e), ...opts });
  for (const [type, fn] of Object.entries(handlers)) w.task(type, fn);
  const running = w.run();
  running.catch(() => {});
  await Promise.race([w.ready, running]);
  return { worker: w, running, errors, stop: async () => { await w.stop(); await running; } };
}

/** requestCounts reads dtq_http_requests_total by route (summed over codes) from /metrics. */
export async function requestCounts() {
  const text = await (await fetch(`${url()}/metrics`)).text();
  const counts = {};
  for (const m of text.matchAll(/^dtq_http_requests_total\{([^}]*)\} (\d+)/gm)) {
    const route = /route="([^"]*)"/.exec(m[1])?.[1];
    if (route) counts[route] = (counts[route] ?? 0) + Number(m[2]);
  }
  return counts;
}

/** delta is how many more requests each route had in after than in before. */
export function delta(before, after, route) {
  return (after[route] ?? 0) - (before[route] ?? 0);
}

/**
 * startProxy runs an HTTP proxy to the server under test on a free port.
 * intercept(req, res) may answer a request itself (returning true); the rest
 * are forwarded. seen lists each request as "METHOD path".
 */
export async function startProxy(intercept = () => false) {
  const { createServer, request } = await import('node:http');
  const target = new URL(url());
  const seen = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (intercept(req, res)) return;
    const out = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode, up.headers);
      up.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    seen,
    close: () => { server.closeAllConnections(); server.close(); },
  };
}
