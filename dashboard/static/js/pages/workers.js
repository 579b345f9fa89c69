// Workers: the live workers and their heartbeats, refreshed every 2 s —
// Go workers, and HTTP workers (lease holders, "http:<name>") while they
// poll. A Go worker's state (running, quiet, stopping), and for an admin
// Quiet and Stop, each after a confirmation.

import { h, replace, setText } from '../dom.js';
import { timeEl, num, plural } from '../fmt.js';

// STATE_COLOURS colours a worker's state as the task statuses are.
const STATE_COLOURS = { running: 'running', quiet: 'scheduled', stopping: 'cancelled' };

export function mount(main, ctx) {
  document.title = 'Workers · dtq';
  const { api } = ctx;
  const status = h('p', { class: 'state', role: 'status' }, 'Loading workers…');
  const tbody = h('tbody');
  const table = h('table', { class: 'rtable workers', hidden: true },
    h('caption', { class: 'sr-only' }, 'Live workers'),
    h('thead', {}, h('tr', {}, ['Worker', 'Queues', 'Busy', 'State', 'Started', 'Last heartbeat'].map((c) => h('th', { scope: 'col' }, c)),
      h('th', { scope: 'col', dataset: { need: 'admin' } }, 'Actions'))),
    tbody);
  const summary = h('span', { class: 'muted' });
  replace(main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Workers'),
      h('p', { class: 'muted' }, 'Go workers whose heartbeat arrived within the last 15 s, and HTTP workers that leased within the last minute. ', summary)),
    h('section', { class: 'card' }, status, h('div', { class: 'table-wrap' }, table)));

  const rows = new Map();
  const load = async () => {
    try {
      const res = await api.get('api/v1/workers');
      const ws = (res.workers || []).slice().sort((a, b) => (a.host + a.pid).localeCompare(b.host + b.pid));
      const keep = new Set();
      let busy = 0, slots = 0;
      ws.forEach((w, i) => {
        keep.add(w.id);
        busy += w.busy;
        slots += w.concurrency;
        let r = rows.get(w.id);
        if (!r) {
          r = { meter: h('meter', { min: 0, max: Math.max(1, w.concurrency), value: 0 }), busy: h('span'), beat: h('span'), state: h('span', { class: 'worker-state' }) };
          r.quiet = h('button', { type: 'button', class: 'btn', 'aria-label': 'Quiet worker ' + w.id }, 'Quiet');
          r.stop = h('button', { type: 'button', class: 'btn btn-danger', 'aria-label': 'Stop worker ' + w.id }, 'Stop');
          r.quiet.addEventListener('click', () => control(r.quiet, w, 'quiet'));
          r.stop.addEventListener('click', () => control(r.stop, w, 'stop'));
          r.tr = h('tr', { dataset: { id: w.id } },
            h('td', { dataset: { label: 'Worker' } }, h('strong', {}, workerName(w)),
              h('div', { class: 'mono small muted' }, w.id), w.library ? h('div', { class: 'small muted worker-library' }, w.library) : null),
            h('td', { dataset: { label: 'Queues' } }, (w.queues || []).map((q) => h('span', { class: 'chip' }, q))),
            h('td', { dataset: { label: 'Busy' } }, r.meter, ' ', r.busy),
            h('td', { dataset: { label: 'State' } }, r.state),
            h('td', { dataset: { label: 'Started' } }, timeEl(w.started_at)),
            h('td', { dataset: { label: 'Last heartbeat' } }, r.beat),
            h('td', { class: 'actions', dataset: { label: 'Actions', need: 'admin' } },
              w.kind === 'http' ? h('span', { class: 'muted small' }, 'stop its process') : [r.quiet, ' ', r.stop]));
          rows.set(w.id, r);
        }
        r.meter.max = Math.max(1, w.concurrency);
        r.meter.value = w.busy;
        setText(r.busy, w.busy + ' / ' + w.concurrency);
        const asked = w.requested && !(w.requested === 'quiet' && w.state !== 'running') && !(w.requested === 'stop' && w.state === 'stopping');
        replace(r.state, w.kind === 'http' ? '–' : h('span', { class: 'badge b-' + (STATE_COLOURS[w.state] || 'unknown') }, w.state || 'running'), asked ? h('span', { class: 'muted small' }, ' (' + w.requested + ' asked)') : null);
        r.quiet.disabled = !!w.requested;
        r.stop.disabled = w.requested === 'stop';
        const late = Date.now() - Date.parse(w.last_heartbeat) > (w.kind === 'http' ? 30000 : 7000);
        replace(r.beat, timeEl(w.last_heartbeat), late ? h('span', { class: 'badge b-scheduled' }, 'late') : null);
        if (tbody.children[i] !== r.tr) tbody.insertBefore(r.tr, tbody.children[i] || null);
      });
      for (const [id, r] of rows) if (!keep.has(id)) { r.tr.remove(); rows.delete(id); }
      table.hidden = !ws.length;
      status.hidden = !!ws.length;
      status.classList.remove('error');
      setText(summary, ws.length ? plural(ws.length, 'worker') + ', ' + num(busy) + ' of ' + num(slots) + ' slots busy.' : '');
      if (!ws.length) setText(status, 'No live workers. Start one with dtq serve, or dtq worker --redis … beside dtq api.');
    } catch (e) {
      status.hidden = false;
      status.classList.add('error');
      setText(status, 'Could not load the workers: ' + e.message);
    }
  };
  // control asks worker w to quiet or stop, after a confirmation.
  const control = async (btn, w, ask) => {
    const ok = await ctx.confirm(ask === 'quiet' ? {
      title: 'Quiet ' + workerName(w) + '?',
      text: 'Worker ' + w.id + ' takes no new tasks; the ' + plural(w.busy, 'task') + ' it runs finish. It stays quiet until it is stopped.',
      ok: 'Quiet',
    } : {
      title: 'Stop ' + workerName(w) + '?',
      text: 'Worker ' + w.id + ' takes no new tasks and stops as on SIGTERM: the ' + plural(w.busy, 'task') +
        ' it runs get its shutdown timeout to finish, the rest are handed back and retried. dtq worker then exits.',
      ok: 'Stop', danger: true,
    });
    if (!ok) return;
    const r = await ctx.act(btn, () => api.post('api/v1/workers/' + api.seg(w.id) + '/' + ask),
      ask === 'quiet' ? 'Worker asked to quiet.' : 'Worker asked to stop.');
    if (r) load();
  };
  const poll = setInterval(load, 2000);
  load();
  return () => clearInterval(poll);
}

// workerName is how a worker is named in its row: a Go worker by its host
// and pid, an HTTP worker (a lease holder) by its address.
function workerName(w) {
  if (w.kind === 'http') return 'HTTP worker' + (w.host ? ' · ' + w.host : '');
  return w.host + ' · pid ' + w.pid;
}
