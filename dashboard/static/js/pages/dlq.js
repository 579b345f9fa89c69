// Dead letters: a queue's dead-letter stream with the reason and attempts,
// requeue or discard one, requeue all or purge with a confirmation, and a
// filtered redrive (type, reason, time) that counts first.

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
  const requeueAll = h('button', { type: 'button', class: 'btn', id: 'requeue-all', dataset: { need: 'admin' } }, 'Requeue all');
  const purge = h('button', { type: 'button', class: 'btn btn-danger', id: 'purge', dataset: { need: 'admin' } }, 'Purge');
  const status = h('p', { class: 'state', role: 'status' }, 'Loading dead letters…');
  const tbody = h('tbody');
  const table = h('table', { class: 'rtable dlq', hidden: true },
    h('caption', { class: 'sr-only' }, 'Dead letters'),
    h('thead', {}, h('tr', {}, ['Task', 'Type', 'Reason', 'Attempts', 'Dead since', h('span', { class: 'sr-only' }, 'Actions')].map((c) => h('th', { scope: 'col' }, c)))),
    tbody);
  const more = h('button', { type: 'button', class: 'btn', hidden: true }, 'Load more');

  // Redrive: requeue the dead letters that match filters, paced; a dry run
  // counts them first.
  const rType = h('input', { id: 'r-type', type: 'text', placeholder: 'any', autocomplete: 'off' });
  const rErr = h('input', { id: 'r-error', type: 'text', placeholder: 'any', autocomplete: 'off' });
  const rAfter = h('input', { id: 'r-after', type: 'datetime-local' });
  const rBefore = h('input', { id: 'r-before', type: 'datetime-local' });
  const rRate = h('input', { id: 'r-rate', type: 'number', min: '1', max: '1000', value: '100' });
  const dry = h('button', { type: 'button', class: 'btn', id: 'redrive-count' }, 'Count matches');
  const redrive = h('button', { type: 'button', class: 'btn btn-primary', id: 'redrive' }, 'Redrive…');
  const rOut = h('p', { class: 'muted small', id: 'redrive-result', role: 'status' });
  const filter = (dryRun) => {
    const b = { queue, dry_run: dryRun, limit: 1000 };
    if (rType.value.trim()) b.task_type = rType.value.trim();
    if (rErr.value.trim()) b.error_contains = rErr.value.trim();
    if (rAfter.value) b.dead_after = new Date(rAfter.value).toISOString();
    if (rBefore.value) b.dead_before = new Date(rBefore.value).toISOString();
    if (!dryRun) b.rate_per_second = Number(rRate.value) || 100;
    return b;
  };
  const matches = (r) => num(r.matched) + (r.more ? '+' : '') + ' ' + (r.matched === 1 && !r.more ? 'dead letter matches' : 'dead letters match');
  dry.addEventListener('click', async () => {
    const r = await ctx.act(dry, () => api.postJSON('api/v1/dlq/redrive', filter(true)), (r) => 'Dry run: ' + matches(r) + '.');
    if (r) setText(rOut, 'Dry run: ' + matches(r) + ' in ' + queue + '; nothing was requeued.');
  });
  redrive.addEventListener('click', async () => {
    const counted = await ctx.act(redrive, () => api.postJSON('api/v1/dlq/redrive', filter(true)), null);
    if (!counted) return;
    if (!counted.matched) { setText(rOut, 'No dead letter matches: nothing to redrive.'); return; }
    const b = filter(false);
    const ok = await ctx.confirm({
      title: 'Redrive ' + num(counted.matched) + (counted.more ? '+' : '') + ' dead letters of ' + queue + '?',
      text: 'The dead tasks that match go back to QUEUED with their attempts reset, at most ' + b.rate_per_second +
        ' per second (up to 1,000 per redrive), and run again. The redrive is recorded in the audit log.',
      ok: 'Redrive',
    });
    if (!ok) return;
    const r = await ctx.act(redrive, () => api.postJSON('api/v1/dlq/redrive', b), (r) => 'Requeued ' + num(r.requeued) + ' tasks of ' + queue + '.');
    if (r) {
      setText(rOut, 'Requeued ' + num(r.requeued) + ' of ' + matches(r) + (r.more ? ': redrive again for the rest.' : '.'));
      load(false);
      refreshCounts();
    }
  });
  const field = (label, input) => h('label', { for: input.id }, label, input);

  replace(main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Dead letters'),
      h('p', { class: 'muted' }, 'Tasks that failed for good. Requeue runs one again with its attempts reset; discard removes it from the list.')),
    h('section', { class: 'card toolbar' },
      h('label', { for: 'd-queue' }, 'Queue', qSel), count,
      h('div', { class: 'actions' }, requeueAll, purge)),
    h('section', { class: 'card redrive', 'aria-labelledby': 'redrive-h', dataset: { need: 'admin' } },
      h('h2', { id: 'redrive-h' }, 'Redrive'),
      h('p', { class: 'muted small card-help' }, 'Requeue the dead letters that match every filter given — task type, a part of the reason (any letter case), when they died — paced, so a recovering dependency is not flooded. Count first.'),
      h('div', { class: 'toolbar' }, field('Task type', rType), field('Reason contains', rErr), field('Died after', rAfter),
        field('Died before', rBefore), field('Per second', rRate), h('div', { class: 'actions' }, dry, redrive)),
      rOut),
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
    const rq = h('button', { type: 'button', class: 'btn btn-small btn-primary', 'aria-label': 'Requeue ' + t.id, dataset: { need: 'admin' } }, 'Requeue');
    const ds = h('button', { type: 'button', class: 'btn btn-small', 'aria-label': 'Discard ' + t.id, dataset: { need: 'admin' } }, 'Discard');
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
      requeueAll.disabled = purge.disabled = dry.disabled = redrive.disabled = !total;
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
