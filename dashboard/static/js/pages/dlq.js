// Dead letters: a queue's dead-letter stream with the reason and attempts,
// requeue or discard one, requeue all or purge with a confirmation.

import { h, replace, setText, throttle, taskHref, routeHref } from '../dom.js';
import { timeEl, num, plural } from '../fmt.js';

const PAGE = 50;

export function mount(main, ctx, route) {
  document.title = 'Dead letters · dtq';
  const { api, stream } = ctx;
  let queue = route.params.queue || '';

  const qSel = h('select', { id: 'd-queue' });
  qSel.addEventListener('change', () => { location.hash = routeHref('dlq', { queue: qSel.value }); });
  const count = h('span', { class: 'muted' });
  const requeueAll = h('button', { type: 'button', class: 'btn', id: 'requeue-all' }, 'Requeue all');
  const purge = h('button', { type: 'button', class: 'btn btn-danger', id: 'purge' }, 'Purge');
  const status = h('p', { class: 'state', role: 'status' }, 'Loading dead letters…');
  const tbody = h('tbody');
  const table = h('table', { class: 'rtable dlq', hidden: true },
    h('caption', { class: 'sr-only' }, 'Dead letters'),
    h('thead', {}, h('tr', {}, ['Task', 'Type', 'Reason', 'Attempts', 'Dead since', h('span', { class: 'sr-only' }, 'Actions')].map((c) => h('th', { scope: 'col' }, c)))),
    tbody);
  const more = h('button', { type: 'button', class: 'btn', hidden: true }, 'Load more');

  replace(main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Dead letters'),
      h('p', { class: 'muted' }, 'Tasks that failed for good. Requeue runs one again with its attempts reset; discard removes it from the list.')),
    h('section', { class: 'card toolbar' },
      h('label', { for: 'd-queue' }, 'Queue', qSel), count,
      h('div', { class: 'actions' }, requeueAll, purge)),
    h('section', { class: 'card' }, status, h('div', { class: 'table-wrap' }, table), h('div', { class: 'more' }, more)));

  let total = 0, cursor = '', pages = 0;
  const rows = new Map();

  const remove = (id) => {
    const r = rows.get(id);
    if (r) { r.tr.remove(); rows.delete(id); }
    if (!rows.size) empty();
  };
  const row = (d) => {
    const t = d.task;
    const cell = (label, ...kids) => h('td', { dataset: { label } }, ...kids);
    const rq = h('button', { type: 'button', class: 'btn btn-small btn-primary', 'aria-label': 'Requeue ' + t.id }, 'Requeue');
    const ds = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': 'Discard ' + t.id }, 'Discard');
    rq.addEventListener('click', async () => {
      if (await ctx.act(rq, () => api.post('api/v1/dlq/' + api.seg(t.id) + '/requeue'), 'Requeued ' + t.id + ': it runs again.')) {
        remove(t.id);
        refreshCounts();
      }
    });
    ds.addEventListener('click', async () => {
      if (await ctx.act(ds, () => api.del('api/v1/dlq/' + api.seg(t.id)), 'Discarded ' + t.id + ' from the dead letters.')) {
        remove(t.id);
        refreshCounts();
      }
    });
    const tr = h('tr', { dataset: { id: t.id } },
      cell('Task', h('a', { href: taskHref(t.id), class: 'mono' }, t.id)),
      cell('Type', h('span', { class: 'mono' }, t.task_type)),
      cell('Reason', h('span', { class: 'reason' }, d.reason || '–'),
        t.last_error && t.last_error !== d.reason ? h('span', { class: 'err-line', title: t.last_error }, t.last_error) : null),
      cell('Attempts', t.attempt + ' / ' + t.max_attempts + (t.crashes ? ' (' + t.crashes + ' crashed)' : '')),
      cell('Dead since', timeEl(d.dead_at)),
      h('td', { class: 'actions', dataset: { label: 'Actions' } }, rq, ds));
    return { tr };
  };
  const empty = () => {
    table.hidden = true;
    status.hidden = false;
    status.classList.remove('error');
    setText(status, queue ? 'No dead letters in queue ' + queue + '. Tasks land here when they fail for good.' : 'No queues yet.');
  };

  const show = (letters, append) => {
    if (!append) { tbody.replaceChildren(); rows.clear(); }
    for (const d of letters) {
      if (rows.has(d.task.id)) continue;
      const r = row(d);
      rows.set(d.task.id, r);
      tbody.append(r.tr);
    }
    if (!rows.size) { empty(); return; }
    table.hidden = false;
    status.hidden = true;
  };

  const load = async (append) => {
    if (!queue) { empty(); return; }
    try {
      const res = await api.get('api/v1/dlq', { queue, limit: PAGE, cursor: append ? cursor : '' });
      cursor = res.next_cursor || '';
      pages = append ? pages + 1 : 1;
      show(res.dead_letters || [], append);
      more.hidden = !cursor;
    } catch (e) {
      status.hidden = false;
      status.classList.add('error');
      replace(status, 'Could not load the dead letters: ' + e.message);
    }
  };
  more.addEventListener('click', () => load(true));

  const refreshCounts = async () => {
    try {
      const res = await api.get('api/v1/queues');
      const qs = res.queues || [];
      if (!queue) {
        const withDead = qs.find((q) => q.dead > 0);
        queue = withDead ? withDead.name : qs.length ? qs[0].name : '';
        if (queue) load(false); else empty();
      }
      const names = qs.map((q) => q.name);
      if (queue && !names.includes(queue)) qs.unshift({ name: queue, dead: 0 });
      replace(qSel, qs.map((q) => h('option', { value: q.name, selected: q.name === queue }, q.name + ' (' + num(q.dead) + ' dead)')));
      const mine = qs.find((q) => q.name === queue);
      total = mine ? mine.dead : 0;
      setText(count, queue ? plural(total, 'dead letter') + ' in ' + queue : '');
      requeueAll.disabled = purge.disabled = !total;
    } catch (e) {
      setText(count, 'Could not count the dead letters: ' + e.message);
    }
  };

  requeueAll.addEventListener('click', async () => {
    const ok = await ctx.confirm({
      title: 'Requeue every dead letter of ' + queue + '?',
      text: 'All ' + num(total) + ' dead tasks of queue ' + queue + ' go back to QUEUED with their attempts reset, and run again.',
      ok: 'Requeue ' + num(total),
    });
    if (!ok) return;
    const res = await ctx.act(requeueAll, () => api.post('api/v1/dlq/requeue', { queue }), (r) => 'Requeued ' + num(r.requeued) + ' tasks of ' + queue + '.');
    if (res) { load(false); refreshCounts(); }
  });
  purge.addEventListener('click', async () => {
    const ok = await ctx.confirm({
      title: 'Purge the dead letters of ' + queue + '?',
      text: 'All ' + num(total) + ' dead letters of queue ' + queue + ' are discarded: they cannot be requeued from here any more. The tasks stay DEAD until they expire.',
      ok: 'Purge ' + num(total), danger: true,
    });
    if (!ok) return;
    const res = await ctx.act(purge, () => api.del('api/v1/dlq', { queue }), (r) => 'Discarded ' + num(r.discarded) + ' dead letters of ' + queue + '.');
    if (res) { load(false); refreshCounts(); }
  });

  const refresh = throttle(() => { if (pages <= 1) load(false); refreshCounts(); }, 1000);
  const offEvent = stream.onEvent((e) => { if (e.queue === queue && (e.status === 'DEAD' || e.status === 'QUEUED')) refresh(); });
  const offState = stream.onState((st, info) => { if (st === 'live' && info.reconnected) refresh(); });
  const poll = setInterval(refresh, 10000);
  refreshCounts();
  if (queue) load(false);

  return () => {
    offEvent();
    offState();
    refresh.cancel();
    clearInterval(poll);
  };
}
