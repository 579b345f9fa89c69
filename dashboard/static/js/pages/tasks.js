// Tasks: the tasks of a queue in the API's order (CONTRACT 3.6.6: running
// and queued in the order they run, then scheduled, dead, finished),
// filtered by status (or only the suspended ones) and type and searched by
// id prefix, error text and creation time; and a search by task id. An
// admin selects tasks (or all that match) for a bulk action: tasks_bulk.js.

import { h, replace, setText, throttle, taskHref, routeHref } from '../dom.js';
import { badge, timeEl, STATUSES, num } from '../fmt.js';
import { bulkBar, bulkFilter } from './tasks_bulk.js';

const PAGE = 50;
// SUSPENDED is the status filter's value for the suspended tasks (SCHEDULED
// in a durable sleep or a wait for a signal): ?suspended=true.
const SUSPENDED = 'SUSPENDED';
// MAX_FOLLOW bounds the requests one "load" makes following short pages (a
// filter that skips most tasks gives short pages with a next cursor).
const MAX_FOLLOW = 10;

export function mount(main, ctx, route) {
  document.title = 'Tasks · dtq';
  const { api, stream } = ctx;
  const p = route.params;
  const queue = p.queue || 'default';
  const filter = {
    queue, status: STATUSES.includes(p.status) ? p.status : '', suspended: p.suspended === 'true', type: p.type || '',
    id_prefix: p.id_prefix || '', error: p.error || '', created_after: p.created_after || '', created_before: p.created_before || '',
  };
  const filtered = () => !!(filter.status || filter.suspended || filter.type || filter.id_prefix || filter.error || filter.created_after || filter.created_before);
  // datetime-local inputs hold local times; the API takes RFC 3339
  const local = (iso) => {
    if (!iso) return '';
    const d = new Date(iso);
    if (isNaN(d)) return '';
    return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
  };
  const iso = (v) => (v ? new Date(v).toISOString() : '');

  // --- filters
  const qSel = h('select', { id: 'f-queue', name: 'queue' }, h('option', { value: queue, selected: true }, queue));
  const sSel = h('select', { id: 'f-status', name: 'status' },
    h('option', { value: '' }, 'any status'),
    STATUSES.map((s) => [h('option', { value: s, selected: s === filter.status && !filter.suspended }, s),
      s === 'SCHEDULED' ? h('option', { value: SUSPENDED, selected: filter.suspended }, 'SCHEDULED: suspended') : null]));
  const tIn = h('input', { id: 'f-type', name: 'type', type: 'text', value: filter.type, placeholder: 'any type', autocomplete: 'off', spellcheck: 'false' });
  const pIn = h('input', { id: 'f-prefix', name: 'id_prefix', type: 'text', value: filter.id_prefix, placeholder: 'id starts with', autocomplete: 'off', spellcheck: 'false' });
  const eIn = h('input', { id: 'f-error', name: 'error', type: 'text', value: filter.error, placeholder: 'error contains', autocomplete: 'off' });
  const aIn = h('input', { id: 'f-after', name: 'created_after', type: 'datetime-local', value: local(filter.created_after) });
  const bIn = h('input', { id: 'f-before', name: 'created_before', type: 'datetime-local', value: local(filter.created_before) });
  const filters = h('form', { class: 'filters', 'aria-label': 'Filter and search tasks' },
    h('label', { for: 'f-queue' }, 'Queue', qSel),
    h('label', { for: 'f-status' }, 'Status', sSel),
    h('label', { for: 'f-type' }, 'Type', tIn),
    h('label', { for: 'f-prefix' }, 'Id prefix', pIn),
    h('label', { for: 'f-error' }, 'Error', eIn),
    h('label', { for: 'f-after' }, 'Created after', aIn),
    h('label', { for: 'f-before' }, 'Created before', bIn),
    h('button', { type: 'submit', class: 'btn btn-primary' }, 'Apply'));
  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    const suspended = sSel.value === SUSPENDED;
    location.hash = routeHref('tasks', {
      queue: qSel.value, status: suspended ? '' : sSel.value, suspended: suspended ? 'true' : '', type: tIn.value.trim(), id_prefix: pIn.value.trim(), error: eIn.value.trim(),
      created_after: iso(aIn.value), created_before: iso(bIn.value),
    });
  });
  qSel.addEventListener('change', () => filters.requestSubmit());
  sSel.addEventListener('change', () => filters.requestSubmit());

  const idIn = h('input', { id: 'f-id', name: 'id', type: 'search', placeholder: 'default-01M8…', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'f-id-help' });
  const idMsg = h('p', { id: 'f-id-help', class: 'muted small' }, 'Exact id, as submit answered it.');
  const search = h('form', { class: 'filters search', role: 'search', 'aria-label': 'Find a task by id' },
    h('label', { for: 'f-id' }, 'Task id', idIn), h('button', { type: 'submit', class: 'btn' }, 'Open'), idMsg);
  search.addEventListener('submit', async (e) => {
    e.preventDefault();
    const id = idIn.value.trim();
    if (!id) return;
    try {
      await api.get('api/v1/tasks/' + api.seg(id));
      location.hash = taskHref(id);
    } catch (err) {
      idMsg.classList.add('error');
      setText(idMsg, err.status === 404 ? 'No task ' + id + ': unknown, or expired after the retention.' : err.message);
    }
  });

  // --- table
  const bulk = bulkBar(ctx, queue, () => bulkFilter(filter), () => load(false));
  const status = h('p', { class: 'state', role: 'status' }, 'Loading tasks…');
  const tbody = h('tbody');
  const table = h('table', { class: 'rtable tasks', hidden: true },
    h('caption', { class: 'sr-only' }, 'Tasks of queue ' + queue),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'pick', dataset: { need: 'admin' } }, bulk.all),
      ['Task', 'Type', 'Status', 'Priority', 'Attempts', 'Created', 'Finished', 'Last error'].map((c) => h('th', { scope: 'col' }, c)))),
    tbody);
  const more = h('button', { type: 'button', class: 'btn', hidden: true }, 'Load more');
  const live = h('span', { class: 'muted small' });

  replace(main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Tasks'), live),
    h('section', { class: 'card toolbar' }, filters, search),
    bulk.bar,
    h('section', { class: 'card' }, status, h('div', { class: 'table-wrap' }, table), h('div', { class: 'more' }, more)));

  const rows = new Map(); // id -> row parts
  const row = (t) => {
    const cell = (label, ...kids) => h('td', { dataset: { label } }, ...kids);
    const r = {
      status: h('span'), attempts: h('span'), finished: h('span'), error: h('span', { class: 'err-line' }),
    };
    r.tr = h('tr', { dataset: { id: t.id } },
      h('td', { class: 'pick', dataset: { need: 'admin', label: 'Select' } }, bulk.check(t.id)),
      cell('Task', h('a', { href: taskHref(t.id), class: 'mono' }, t.id)),
      cell('Type', h('span', { class: 'mono' }, t.task_type)),
      cell('Status', r.status),
      cell('Priority', String(t.priority)),
      cell('Attempts', r.attempts),
      cell('Created', timeEl(t.created_at)),
      cell('Finished', r.finished),
      cell('Last error', r.error));
    return r;
  };
  const fill = (r, t) => {
    replace(r.status, badge(t.status), t.cancel_requested ? h('span', { class: 'muted small' }, ' cancelling') : null,
      t.suspended ? h('span', { class: 'muted small suspended-note' },
        t.suspended.for === 'sleep' ? ' sleeping' : ' waiting for ' + t.suspended.name) : null);
    setText(r.attempts, t.attempt + ' / ' + t.max_attempts);
    replace(r.finished, t.finished_at ? timeEl(t.finished_at) : t.scheduled_at ? h('span', {}, 'due ', timeEl(t.scheduled_at)) : '–');
    setText(r.error, t.last_error || '');
    r.error.title = t.last_error || '';
  };

  let cursor = '', pages = 0, loading = false;
  const load = async (append) => {
    if (loading) return;
    loading = true;
    more.disabled = true;
    try {
      let got = [];
      let next = append ? cursor : '';
      for (let i = 0; i < MAX_FOLLOW; i++) {
        const res = await api.get('api/v1/tasks', {
          queue, status: filter.status, suspended: filter.suspended ? 'true' : '', type: filter.type, id_prefix: filter.id_prefix, error: filter.error,
          created_after: filter.created_after, created_before: filter.created_before, limit: PAGE, cursor: next,
        });
        got = got.concat(res.tasks || []);
        next = res.next_cursor || '';
        if (!next || got.length >= PAGE) break;
      }
      cursor = next;
      pages = append ? pages + 1 : 1;
      show(got, append);
      more.hidden = !cursor;
    } catch (e) {
      status.hidden = false;
      status.classList.add('error');
      replace(status, 'Could not load the tasks: ' + e.message);
    } finally {
      loading = false;
      more.disabled = false;
    }
  };
  const show = (tasks, append) => {
    const keep = new Set();
    tasks.forEach((t, i) => {
      keep.add(t.id);
      let r = rows.get(t.id);
      if (!r) { r = row(t); rows.set(t.id, r); }
      fill(r, t);
      if (append) tbody.append(r.tr);
      else if (tbody.children[i] !== r.tr) tbody.insertBefore(r.tr, tbody.children[i] || null);
    });
    if (!append) {
      for (const [id, r] of rows) if (!keep.has(id)) { r.tr.remove(); rows.delete(id); bulk.forget(id); }
    }
    table.hidden = rows.size === 0;
    status.classList.remove('error');
    if (rows.size === 0) {
      status.hidden = false;
      setText(status, filtered()
        ? 'No tasks of queue ' + queue + ' match these filters.'
        : 'No tasks in queue ' + queue + ' (finished tasks expire after the retention).');
    } else {
      status.hidden = true;
    }
    bulk.show();
    setText(live, pages > 1 ? 'Showing ' + num(rows.size) + ' tasks; live refresh is off while more than one page is loaded.' : 'Live: refreshes when tasks of ' + queue + ' change.');
  };
  more.addEventListener('click', () => load(true));

  const refresh = throttle(() => { if (pages <= 1) load(false); }, 1000);
  const offEvent = stream.onEvent((e) => { if (e.queue === queue) refresh(); });
  const offState = stream.onState((st, info) => { if (st === 'live' && info.reconnected) refresh(); });
  const poll = setInterval(refresh, 10000);

  api.get('api/v1/queues').then((res) => {
    const names = (res.queues || []).map((q) => q.name);
    if (!names.includes(queue)) names.unshift(queue);
    replace(qSel, names.map((n) => h('option', { value: n, selected: n === queue }, n)));
  }).catch(() => {});
  load(false);

  return () => {
    offEvent();
    offState();
    refresh.cancel();
    clearInterval(poll);
  };
}
