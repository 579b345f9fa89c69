// Overview: every queue with its depth per state (with the suspended part
// of the scheduled tasks) and priority band, pause and resume, and live
// charts fed by /ws/events.

import { h, replace, setText, throttle, routeHref } from '../dom.js';
import { num, rate, duration } from '../fmt.js';
import { LineChart } from '../chart.js';

export function mount(main, ctx) {
  document.title = 'Overview · dtq';
  const { api, stream, rates } = ctx;

  const tile = (label, cls) => {
    const v = h('span', { class: 'tile-value' }, '–');
    const el = h('div', { class: 'tile ' + (cls || '') }, h('span', { class: 'tile-label' }, label), v);
    return { el, v };
  };
  const tiles = {
    queued: tile('Queued'),
    scheduled: tile('Scheduled'),
    running: tile('Running'),
    dead: tile('Dead letters', 'tile-dead'),
    rate: tile('Succeeded / s (last 10 s)'),
  };

  const thr = new LineChart({
    title: 'Throughput in tasks per second over the last 5 minutes: submitted, succeeded, failed',
    series: [
      { key: 'submitted', name: 'submitted' },
      { key: 'succeeded', name: 'succeeded' },
      { key: 'failed', name: 'failed' },
    ],
    format: rate,
    min: 4,
  });
  const lat = new LineChart({
    title: 'Pickup latency over the last 5 minutes: median and max per second',
    series: [
      { key: 'p50', name: 'median' },
      { key: 'max', name: 'max' },
    ],
    format: duration,
    min: 20,
  });

  // The outbox line: shown when this process relays a PostgreSQL outbox
  // (--outbox), read from its /metrics (docs/outbox.md).
  const outbox = h('section', { class: 'card outbox', hidden: true, 'aria-label': 'Outbox' });

  const status = h('p', { class: 'state', role: 'status' }, 'Loading queues…');
  const tbody = h('tbody');
  const table = h('table', { class: 'rtable queues', hidden: true },
    h('caption', { class: 'sr-only' }, 'Queues'),
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Queue'),
      h('th', { scope: 'col' }, 'State'),
      h('th', { scope: 'col', class: 'n' }, 'Queued'),
      h('th', { scope: 'col', class: 'n' }, 'Scheduled'),
      h('th', { scope: 'col', class: 'n' }, 'Running'),
      h('th', { scope: 'col', class: 'n' }, 'Dead'),
      h('th', { scope: 'col' }, 'Queued by priority (9 → 0)'),
      h('th', { scope: 'col' }, 'Totals'),
      h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')))),
    tbody);

  replace(main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Overview'),
      h('p', { class: 'muted' }, 'Counts refresh on every event; charts show what happened since this page opened.')),
    h('section', { class: 'tiles', 'aria-label': 'Totals over all queues' }, Object.values(tiles).map((t) => t.el)),
    outbox,
    h('section', { class: 'charts' },
      h('figure', { class: 'card' }, h('figcaption', {}, 'Throughput ', h('small', {}, 'tasks per second')), thr.el),
      h('figure', { class: 'card' }, h('figcaption', {}, 'Pickup latency ', h('small', {}, 'queued → running')), lat.el)),
    h('section', { class: 'card', 'aria-labelledby': 'queues-h' },
      h('h2', { id: 'queues-h' }, 'Queues'), status, h('div', { class: 'table-wrap' }, table)));

  const rows = new Map(); // queue name -> row parts

  const row = (q) => {
    const cell = (label, cls, ...kids) => h('td', { class: cls || '', dataset: { label } }, ...kids);
    const r = {
      name: h('a', { href: routeHref('tasks', { queue: q.name }), class: 'qname' }, q.name),
      state: h('span', { class: 'badge' }),
      queued: h('span'), scheduled: h('span'), running: h('span'),
      suspended: h('a', { class: 'suspended-link small', href: routeHref('tasks', { queue: q.name, suspended: 'true' }), hidden: true }),
      dead: h('a', { href: routeHref('dlq', { queue: q.name }) }),
      bands: h('div', { class: 'bands', 'aria-hidden': 'true' }),
      bandsText: h('span', { class: 'sr-only' }),
      totals: h('span', { class: 'totals' }),
      btn: h('button', { type: 'button', class: 'btn btn-small', dataset: { need: 'admin' } }),
      paused: false,
    };
    for (let p = 9; p >= 0; p--) r.bands.append(h('span', { class: 'band', dataset: { p: String(p) } }, h('span', { class: 'band-fill' })));
    r.btn.addEventListener('click', () => toggle(q.name, r));
    r.tr = h('tr', { dataset: { queue: q.name } },
      cell('Queue', 'qcell', r.name),
      cell('State', '', r.state),
      cell('Queued', 'n', r.queued),
      cell('Scheduled', 'n', r.scheduled, r.suspended),
      cell('Running', 'n', r.running),
      cell('Dead', 'n', r.dead),
      cell('By priority', '', r.bands, r.bandsText),
      cell('Totals', '', r.totals),
      cell('Actions', 'actions', r.btn));
    return r;
  };

  const fill = (r, q) => {
    r.paused = q.paused;
    setText(r.state, q.paused ? 'paused' : 'active');
    r.state.className = 'badge ' + (q.paused ? 'b-paused' : 'b-active');
    setText(r.queued, num(q.queued));
    setText(r.scheduled, num(q.scheduled));
    setText(r.suspended, num(q.suspended) + ' suspended');
    r.suspended.hidden = !q.suspended;
    setText(r.running, num(q.running));
    setText(r.dead, num(q.dead));
    r.dead.className = q.dead > 0 ? 'dead-link has-dead' : 'dead-link';
    const bands = q.queued_by_priority || [];
    const max = Math.max(1, ...bands);
    const parts = [];
    for (const el of r.bands.children) {
      const p = Number(el.dataset.p), n = bands[p] || 0;
      el.title = 'priority ' + p + ': ' + num(n) + ' queued';
      el.firstChild.style.height = n ? Math.max(8, Math.round((n / max) * 100)) + '%' : '0';
      if (n) parts.push('priority ' + p + ': ' + num(n));
    }
    r.bands.title = parts.length ? parts.join(', ') : 'nothing queued';
    setText(r.bandsText, parts.length ? parts.join(', ') : 'nothing queued');
    setText(r.totals, 'submitted ' + num(q.submitted_total) + ' · succeeded ' + num(q.succeeded_total) +
      ' · retried ' + num(q.retried_total) + ' · dead ' + num(q.dead_total) + ' · cancelled ' + num(q.cancelled_total));
    setText(r.btn, q.paused ? 'Resume' : 'Pause');
    r.btn.setAttribute('aria-label', (q.paused ? 'Resume queue ' : 'Pause queue ') + q.name);
    r.btn.className = 'btn btn-small ' + (q.paused ? 'btn-primary' : '');
  };

  const toggle = async (name, r) => {
    const verb = r.paused ? 'resume' : 'pause';
    const res = await ctx.act(r.btn, () => api.post('api/v1/queues/' + api.seg(name) + '/' + verb),
      r.paused ? 'Queue ' + name + ' resumed.' : 'Queue ' + name + ' paused: workers start none of its tasks until it is resumed.');
    if (res) fill(r, res);
  };

  const show = (queues) => {
    const seen = new Set();
    const sum = { queued: 0, scheduled: 0, running: 0, dead: 0 };
    queues.forEach((q, i) => {
      seen.add(q.name);
      let r = rows.get(q.name);
      if (!r) {
        r = row(q);
        rows.set(q.name, r);
      }
      fill(r, q);
      if (tbody.children[i] !== r.tr) tbody.insertBefore(r.tr, tbody.children[i] || null);
      for (const k of Object.keys(sum)) sum[k] += q[k] || 0;
    });
    for (const [name, r] of rows) if (!seen.has(name)) { r.tr.remove(); rows.delete(name); }
    for (const k of Object.keys(sum)) setText(tiles[k].v, num(sum[k]));
    table.hidden = queues.length === 0;
    if (queues.length === 0) {
      status.hidden = false;
      replace(status, 'No queues yet. A queue appears here when a worker starts serving it or its first task is submitted, for example: ',
        h('code', {}, 'dtq submit echo --payload \'{"hello":"world"}\''));
    } else {
      status.hidden = true;
    }
  };

  let loaded = false;
  const load = async () => {
    try {
      const res = await api.get('api/v1/queues');
      loaded = true;
      status.classList.remove('error');
      show(res.queues || []);
    } catch (e) {
      status.hidden = false;
      status.classList.add('error');
      replace(status, (loaded ? 'Could not refresh the queues: ' : 'Could not load the queues: ') + e.message);
    }
  };
  const refresh = throttle(load, 500);

  // loadOutbox reads the dtq_outbox_* gauges of this process's /metrics;
  // it reports whether the process relays an outbox at all.
  const loadOutbox = async () => {
    let text;
    try {
      const res = await fetch('metrics', { headers: { Accept: 'text/plain' } });
      if (!res.ok) return false;
      text = await res.text();
    } catch {
      return false;
    }
    const gauge = (name) => {
      const m = text.match(new RegExp('^' + name + ' (\\S+)$', 'm'));
      return m ? Number(m[1]) : null;
    };
    const active = gauge('dtq_outbox_relay_active');
    if (active === null) {
      outbox.hidden = true;
      return false;
    }
    const waiting = gauge('dtq_outbox_rows_waiting');
    const lag = gauge('dtq_outbox_lag_seconds');
    const failed = gauge('dtq_outbox_rows_failed');
    const relay = h('span', { class: 'muted' }, active ? 'this process relays it' : 'another process relays it');
    if (waiting === null) {
      replace(outbox, h('strong', {}, 'Outbox'), ' ', h('span', { class: 'error' }, 'its database cannot be read now'), ' · ', relay);
    } else {
      replace(outbox, h('strong', {}, 'Outbox'), ' ',
        h('span', { class: 'outbox-waiting' }, num(waiting)), ' waiting · lag ',
        h('span', { class: 'outbox-lag' }, duration(lag * 1000)),
        failed ? h('span', { class: 'error' }, ' · ' + num(failed) + ' failed') : '',
        ' · ', relay);
    }
    outbox.hidden = false;
    return true;
  };
  let outboxPoll = null;
  let closed = false;
  loadOutbox().then((has) => { if (has && !closed) outboxPoll = setInterval(loadOutbox, 5000); });

  const draw = () => {
    const s = rates.series();
    thr.update(s);
    lat.update(s);
    const recent = s.slice(-10);
    setText(tiles.rate.v, rate(recent.reduce((a, p) => a + (p.succeeded || 0), 0) / 10));
  };

  const offEvent = stream.onEvent(refresh);
  const offState = stream.onState((st, info) => { if (st === 'live' && info.reconnected) refresh(); });
  const poll = setInterval(refresh, 5000);
  const tick = setInterval(draw, 1000);
  load();
  draw();

  return () => {
    closed = true;
    clearInterval(outboxPoll);
    offEvent();
    offState();
    refresh.cancel();
    clearInterval(poll);
    clearInterval(tick);
    thr.destroy();
    lat.destroy();
  };
}
