// Workers: the live workers and their heartbeats, refreshed every 2 s —
// Go workers, and HTTP workers (lease holders, "http:<name>") while they
// poll.

import { h, replace, setText } from '../dom.js';
import { timeEl, num, plural } from '../fmt.js';

export function mount(main, ctx) {
  document.title = 'Workers · dtq';
  const { api } = ctx;
  const status = h('p', { class: 'state', role: 'status' }, 'Loading workers…');
  const tbody = h('tbody');
  const table = h('table', { class: 'rtable workers', hidden: true },
    h('caption', { class: 'sr-only' }, 'Live workers'),
    h('thead', {}, h('tr', {}, ['Worker', 'Queues', 'Busy', 'Started', 'Last heartbeat'].map((c) => h('th', { scope: 'col' }, c)))),
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
          r = { meter: h('meter', { min: 0, max: Math.max(1, w.concurrency), value: 0 }), busy: h('span'), beat: h('span') };
          r.tr = h('tr', { dataset: { id: w.id } },
            h('td', { dataset: { label: 'Worker' } }, h('strong', {}, workerName(w)),
              h('div', { class: 'mono small muted' }, w.id), w.library ? h('div', { class: 'small muted worker-library' }, w.library) : null),
            h('td', { dataset: { label: 'Queues' } }, (w.queues || []).map((q) => h('span', { class: 'chip' }, q))),
            h('td', { dataset: { label: 'Busy' } }, r.meter, ' ', r.busy),
            h('td', { dataset: { label: 'Started' } }, timeEl(w.started_at)),
            h('td', { dataset: { label: 'Last heartbeat' } }, r.beat));
          rows.set(w.id, r);
        }
        r.meter.max = Math.max(1, w.concurrency);
        r.meter.value = w.busy;
        setText(r.busy, w.busy + ' / ' + w.concurrency);
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
