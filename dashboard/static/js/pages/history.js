// History: the stored history (GET /api/v1/history) of a queue or all, a
// task type or all, over the last hour to 30 days: counts per bucket, and
// the percentiles of run time and pickup. Refreshed every 30 s.

import { h, replace, setText, routeHref } from '../dom.js';
import { num, duration } from '../fmt.js';
import { LineChart } from '../chart.js';

// RANGES are the stretches offered, with their bucket.
const RANGES = [
  { last: '1h', label: 'last hour', step: 'minute' },
  { last: '6h', label: 'last 6 hours', step: 'minute' },
  { last: '24h', label: 'last 24 hours', step: 'hour' },
  { last: '168h', label: 'last 7 days', step: 'hour' },
  { last: '720h', label: 'last 30 days', step: 'hour' },
];

export function mount(main, ctx, r) {
  document.title = 'History · dtq';
  const { api } = ctx;
  const p = r.params || {};
  const range = RANGES.find((x) => x.last === p.last) || RANGES[0];
  const queue = p.queue || '', type = p.type || '';

  const qSel = h('select', { id: 'h-queue', name: 'queue' }, h('option', { value: '' }, 'all queues'),
    queue ? h('option', { value: queue, selected: true }, queue) : null);
  const tSel = h('select', { id: 'h-type', name: 'type' }, h('option', { value: '' }, 'all types'),
    type ? h('option', { value: type, selected: true }, type) : null);
  const rSel = h('select', { id: 'h-range', name: 'last' },
    RANGES.map((x) => h('option', { value: x.last, selected: x === range }, x.label)));
  const form = h('form', { class: 'filters', 'aria-label': 'Choose the history shown' },
    h('label', { for: 'h-queue' }, 'Queue', qSel),
    h('label', { for: 'h-type' }, 'Type', tSel),
    h('label', { for: 'h-range' }, 'Range', rSel));
  const go = () => { location.hash = routeHref('history', { queue: qSel.value, type: tSel.value, last: rSel.value }); };
  for (const s of [qSel, tSel, rSel]) s.addEventListener('change', go);
  form.addEventListener('submit', (e) => { e.preventDefault(); go(); });

  const stepLabel = range.step === 'minute' ? 'minute' : 'hour';
  const when = (t) => {
    const d = new Date(t * 1000);
    return range.step === 'minute' ? d.toLocaleString([], { dateStyle: 'short', timeStyle: 'short' })
      : d.toLocaleString([], { dateStyle: 'short', hour: '2-digit', minute: '2-digit' });
  };
  // ticks: about six labels along the axis, times of day for up to a day,
  // dates beyond
  const ticks = (pts) => {
    const n = pts.length, out = [];
    const every = Math.max(1, Math.round(n / 6));
    for (let i = 0; i < n; i += every) {
      const d = new Date(pts[i].t * 1000);
      out.push({ i, label: range.last === '168h' || range.last === '720h'
        ? d.toLocaleDateString([], { month: 'short', day: 'numeric' })
        : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) });
    }
    return out;
  };
  const counts = new LineChart({
    title: 'Tasks per ' + stepLabel + ': submitted, succeeded, failed (retried, dead or lost), cancelled',
    series: [
      { key: 'submitted', name: 'submitted' },
      { key: 'succeeded', name: 'succeeded' },
      { key: 'failed', name: 'failed' },
      { key: 'cancelled', name: 'cancelled' },
    ],
    format: num, min: 4, ticks, when,
  });
  const pct = (title) => new LineChart({
    title,
    series: [{ key: 'p50', name: 'p50' }, { key: 'p95', name: 'p95' }, { key: 'p99', name: 'p99' }],
    format: duration, min: 10, ticks, when,
  });
  const run = pct('Run time of the executions that ended, per ' + stepLabel + ': p50, p95, p99');
  const pickup = pct('Pickup (ready to started), per ' + stepLabel + ': p50, p95, p99');

  const tile = (label) => {
    const v = h('span', { class: 'tile-value' }, '–');
    return { el: h('div', { class: 'tile' }, h('span', { class: 'tile-label' }, label), v), v };
  };
  const tiles = { submitted: tile('Submitted'), succeeded: tile('Succeeded'), retried: tile('Retried'), dead: tile('Dead'),
    cancelled: tile('Cancelled'), lost: tile('Lost') };
  const status = h('p', { class: 'state', role: 'status' }, 'Loading the history…');

  replace(main,
    h('div', { class: 'page-head' }, h('h1', {}, 'History'),
      h('p', { class: 'muted' }, 'What the workers and clients counted, per ' + stepLabel +
        ' (minutes are kept a day, hours 30 days); counts arrive within seconds. Refreshed every 30 s.')),
    form,
    h('section', { class: 'tiles', 'aria-label': 'Totals over the range' }, Object.values(tiles).map((t) => t.el)),
    status,
    h('section', { class: 'card' }, h('h2', {}, 'Tasks per ' + stepLabel), counts.el),
    h('section', { class: 'card' }, h('h2', {}, 'Run time'), run.el),
    h('section', { class: 'card' }, h('h2', {}, 'Pickup'), pickup.el));

  let typesShown = '';
  const load = async () => {
    try {
      const res = await api.get('api/v1/history', { queue, type, last: range.last, step: range.step });
      const bs = res.buckets || [];
      const sum = { submitted: 0, succeeded: 0, retried: 0, dead: 0, cancelled: 0, lost: 0 };
      for (const b of bs) for (const k of Object.keys(sum)) sum[k] += b[k];
      for (const k of Object.keys(sum)) setText(tiles[k].v, num(sum[k]));
      const t = (b) => Date.parse(b.at) / 1000;
      counts.update(bs.map((b) => ({ t: t(b), submitted: b.submitted, succeeded: b.succeeded, failed: b.retried + b.dead + b.lost, cancelled: b.cancelled })));
      const ps = (key) => bs.map((b) => (b[key].count
        ? { t: t(b), p50: b[key].p50_ms, p95: b[key].p95_ms, p99: b[key].p99_ms }
        : { t: t(b), p50: null, p95: null, p99: null }));
      run.update(ps('run'));
      pickup.update(ps('pickup'));
      const types = (res.types || []).join('\n');
      if (types !== typesShown) {
        typesShown = types;
        tSel.replaceChildren(h('option', { value: '' }, 'all types'),
          ...[...new Set([...(res.types || []), ...(type ? [type] : [])])].sort().map((x) => h('option', { value: x, selected: x === type }, x)));
      }
      const empty = sum.submitted + sum.succeeded + sum.retried + sum.dead + sum.cancelled + sum.lost === 0;
      status.hidden = !empty;
      status.classList.remove('error');
      if (empty) setText(status, 'Nothing counted in this range yet.');
    } catch (e) {
      status.hidden = false;
      status.classList.add('error');
      setText(status, 'Could not load the history: ' + e.message);
    }
  };
  api.get('api/v1/queues').then((res) => {
    const names = (res.queues || []).map((q) => q.name).filter((n) => n !== queue);
    qSel.append(...names.map((n) => h('option', { value: n }, n)));
  }).catch(() => {});
  const poll = setInterval(load, 30000);
  load();
  return () => {
    clearInterval(poll);
    counts.destroy();
    run.destroy();
    pickup.destroy();
  };
}
