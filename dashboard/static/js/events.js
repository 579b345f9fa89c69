// events.js: one WebSocket to /ws/events for the whole page, reconnecting by
// itself, and the per-second counters the overview charts draw.

import { wsURL } from './api.js';

// EventStream holds the connection. state is 'connecting', 'live' or 'down';
// retryAt is when the next attempt starts while down.
export class EventStream {
  constructor() {
    this.state = 'connecting';
    this.retryAt = 0;
    this.received = 0;
    this.listeners = new Set();
    this.stateListeners = new Set();
    this.backoff = 1000;
    this.ws = null;
    this.timer = null;
  }

  // onEvent calls fn(event) for every event; it returns the unsubscribe.
  onEvent(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  // onState calls fn(state, {reconnected}) on every change of state.
  onState(fn) {
    this.stateListeners.add(fn);
    return () => this.stateListeners.delete(fn);
  }

  setState(state, info = {}) {
    this.state = state;
    for (const fn of this.stateListeners) fn(state, info);
  }

  start() {
    clearTimeout(this.timer);
    this.timer = null;
    const wasDown = this.state === 'down';
    this.setState('connecting');
    let ws;
    try {
      ws = new WebSocket(wsURL());
    } catch {
      this.retry();
      return;
    }
    this.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      this.backoff = 1000;
      this.setState('live', { reconnected: wasDown });
    };
    ws.onmessage = (m) => {
      let e;
      try {
        e = JSON.parse(m.data);
      } catch {
        return;
      }
      this.received++;
      for (const fn of this.listeners) fn(e);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (!opened) this.backoff = Math.min(this.backoff * 2, 15000);
      this.retry();
    };
  }

  // retry schedules the next attempt after the backoff (1 s doubling to
  // 15 s while attempts fail), with jitter.
  retry() {
    const wait = this.backoff * (0.75 + Math.random() * 0.5);
    this.retryAt = Date.now() + wait;
    this.setState('down');
    this.timer = setTimeout(() => this.start(), wait);
  }

  // reconnectNow drops the current connection or wait and connects again
  // (after the API key changed, for example).
  reconnectNow() {
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close();
    this.backoff = 1000;
    this.start();
  }
}

// WINDOW is how many seconds the charts keep.
export const WINDOW = 300;

// Rates turns events into per-second series: submitted (first QUEUED or
// SCHEDULED event of a task), succeeded, failed (executions that failed:
// retried or dead) and the pickup latency (from a task's QUEUED event to its
// RUNNING event: median and max per second). Seconds are those of the
// browser's clock when the event arrived.
export class Rates {
  constructor(stream) {
    this.buckets = [];          // {t, submitted, succeeded, failed, lat: []}
    this.seen = new Map();      // task id -> true, first-seen order (bounded)
    this.queuedAt = new Map();  // task id -> ms of its latest QUEUED event
    this.runningAt = new Map(); // task id -> ms of a RUNNING event seen first
    this.started = Date.now();
    this.totals = { submitted: 0, succeeded: 0, failed: 0 };
    stream.onEvent((e) => this.add(e));
  }

  bucket() {
    const t = Math.floor(Date.now() / 1000);
    let b = this.buckets[this.buckets.length - 1];
    if (!b || b.t !== t) {
      b = { t, submitted: 0, succeeded: 0, failed: 0, lat: [] };
      this.buckets.push(b);
      while (this.buckets.length && this.buckets[0].t <= t - WINDOW) this.buckets.shift();
    }
    return b;
  }

  add(e) {
    const b = this.bucket();
    const at = Date.parse(e.time);
    switch (e.status) {
      case 'QUEUED':
      case 'SCHEDULED':
        if (!e.error && !this.seen.has(e.task_id)) {
          remember(this.seen, e.task_id, true);
          b.submitted++;
          this.totals.submitted++;
        }
        if (e.status === 'SCHEDULED' && e.error) {
          b.failed++;
          this.totals.failed++;
        }
        if (e.status === 'QUEUED') {
          const run = this.runningAt.get(e.task_id);
          if (run !== undefined && run >= at) {
            this.runningAt.delete(e.task_id);
            b.lat.push(run - at);
          } else {
            remember(this.queuedAt, e.task_id, at);
          }
        }
        break;
      case 'RUNNING': {
        const q = this.queuedAt.get(e.task_id);
        if (q !== undefined && q <= at) {
          this.queuedAt.delete(e.task_id);
          b.lat.push(at - q);
        } else {
          remember(this.runningAt, e.task_id, at);
        }
        break;
      }
      case 'SUCCEEDED':
        b.succeeded++;
        this.totals.succeeded++;
        break;
      case 'DEAD':
        b.failed++;
        this.totals.failed++;
        break;
    }
  }

  // series returns the last WINDOW complete seconds, one point per second
  // (zeros where nothing happened, null before the page opened; latency
  // null where nothing started).
  series() {
    this.bucket();
    const now = Math.floor(Date.now() / 1000);
    const byT = new Map(this.buckets.map((b) => [b.t, b]));
    const out = [];
    const first = Math.floor(this.started / 1000);
    for (let t = now - WINDOW; t < now; t++) {
      const b = byT.get(t);
      if (t < first) {
        out.push({ t, submitted: null, succeeded: null, failed: null, p50: null, max: null });
        continue;
      }
      const lat = b ? [...b.lat].sort((x, y) => x - y) : [];
      out.push({
        t,
        submitted: b ? b.submitted : 0,
        succeeded: b ? b.succeeded : 0,
        failed: b ? b.failed : 0,
        p50: lat.length ? lat[Math.floor((lat.length - 1) / 2)] : null,
        max: lat.length ? lat[lat.length - 1] : null,
      });
    }
    return out;
  }
}

// remember sets m[k] = v, keeping at most 20,000 entries (oldest dropped).
function remember(m, k, v) {
  m.delete(k);
  m.set(k, v);
  if (m.size > 20000) m.delete(m.keys().next().value);
}
