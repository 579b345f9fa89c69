// Workflows: the workflows of a queue, newest first, filtered by status
// and creation time (the filters in the URL), each with its status, its
// progress (task nodes succeeded of all) and times, linking to its page;
// Load more pages on; refreshed every 5 s while one page is shown.

import { h, replace, setText, workflowHref, routeHref } from '../dom.js';
import { wfBadge, timeEl, num } from '../fmt.js';

const PAGE = 50;
const WF_STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'];
// MAX_FOLLOW bounds the requests one load makes following short pages (a
// status filter that skips most workflows).
const MAX_FOLLOW = 10;

export function mount(main, ctx, route) {
  document.title = 'Workflows · dtq';
  const { api } = ctx;
  const p = route.params;
  const queue = p.queue || 'default';
  const filter = { status: WF_STATUSES.includes(p.status) ? p.status : '', created_after: p.created_after || '', created_before: p.created_before || '' };
  const local = (iso) => {
    if (!iso) return '';
    const d = new Date(iso);
    if (isNaN(d)) return '';
    return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
  };
  const iso = (v) => (v ? new Date(v).toISOString() : '');

  const qSel = h('select', { id: 'wf-queue', name: 'queue' }, h('option', { value: queue, selected: true }, queue));
  const sSel = h('select', { id: 'wf-status', name: 'status' }, h('option', { value: '' }, 'any status'),
    WF_STATUSES.map((s) => h('option', { value: s, selected: s === filter.status }, s)));
  const aIn = h('input', { id: 'wf-after', name: 'created_after', type: 'datetime-local', value: local(filter.created_after) });
  const bIn = h('input', { id: 'wf-before', name: 'created_before', type: 'datetime-local', value: local(filter.created_before) });
  const filters = h('form', { class: 'filters', 'aria-label': 'Filter workflows' },
    h('label', { for: 'wf-queue' }, 'Queue', qSel),
    h('label', { for: 'wf-status' }, 'Status', sSel),
    h('label', { for: 'wf-after' }, 'Created after', aIn),
    h('label', { for: 'wf-before' }, 'Created before', bIn),
    h('button', { type: 'submit', class: 'btn btn-primary' }, 'Apply'));
  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    location.hash = routeHref('workflows', { queue: qSel.value, status: sSel.value, created_after: iso(aIn.value), created_before: iso(bIn.value) });
  });
  qSel.addEventListener('change', () => filters.requestSubmit());
  sSel.addEventListener('change', () => filters.requestSubmit());

  const status = h('p', { class: 'state', role: 'status' }, 'Loading workflows…');
  const tbody = h('tbody');
  const table = h('table', { class: 'rtable workflows', hidden: true },
    h('caption', { class: 'sr-only' }, 'Workflows of queue ' + queue),
    h('thead', {}, h('tr', {}, ['Workflow', 'Status', 'Progress', 'Created', 'Finished', 'Error'].map((c) => h('th', { scope: 'col' }, c)))),
    tbody);
  const more = h('button', { type: 'button', class: 'btn', hidden: true }, 'Load more');
  const summary = h('span', { class: 'muted small' });
  replace(main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Workflows'),
      h('p', { class: 'muted' }, 'Chains and parallel nodes submitted as one unit, newest first, until they expire. ', summary)),
    h('section', { class: 'card toolbar' }, filters),
    h('section', { class: 'card' }, status, h('div', { class: 'table-wrap' }, table), h('div', { class: 'more' }, more)));

  const row = (w) => {
    const pr = w.progress || {};
    const done = (pr.succeeded || 0) + (pr.failed || 0) + (pr.cancelled || 0) + (pr.skipped || 0);
    const rest = [['active', pr.active], ['failed', pr.failed], ['cancelled', pr.cancelled], ['skipped', pr.skipped]]
      .filter(([, n]) => n > 0).map(([word, n]) => n + ' ' + word).join(', ');
    return h('tr', { dataset: { id: w.id } },
      h('td', { dataset: { label: 'Workflow' } }, h('a', { class: 'mono', href: workflowHref(w.id) }, w.id)),
      h('td', { dataset: { label: 'Status' } }, wfBadge(w.status), w.cancel_requested && w.status === 'RUNNING' ? h('span', { class: 'muted small' }, ' cancelling') : null),
      h('td', { dataset: { label: 'Progress' } },
        h('meter', { min: 0, max: Math.max(1, pr.total || 0), value: done, 'aria-label': done + ' of ' + (pr.total || 0) + ' task nodes ended' }),
        ' ', h('span', { class: 'wf-count' }, (pr.succeeded || 0) + ' / ' + (pr.total || 0) + ' succeeded'),
        rest ? h('div', { class: 'small muted' }, rest) : null),
      h('td', { dataset: { label: 'Created' } }, timeEl(w.created_at)),
      h('td', { dataset: { label: 'Finished' } }, w.finished_at ? timeEl(w.finished_at) : '–'),
      h('td', { dataset: { label: 'Error' } }, h('span', { class: 'err-line', title: w.error || '' }, w.error || '')));
  };

  let cursor = '', pages = 0, loading = false, seen = '';
  const load = async (append) => {
    if (loading) return;
    loading = true;
    more.disabled = true;
    try {
      let got = [];
      let next = append ? cursor : '';
      for (let i = 0; i < MAX_FOLLOW; i++) {
        const res = await api.get('api/v1/workflows', { queue, ...filter, limit: PAGE, cursor: next });
        got = got.concat(res.workflows || []);
        next = res.next_cursor || '';
        if (!next || got.length >= PAGE) break;
      }
      cursor = next;
      pages = append ? pages + 1 : 1;
      const key = JSON.stringify(got);
      if (append) tbody.append(...got.map(row));
      else if (key !== seen) replace(tbody, got.map(row)); // unchanged: keep focus
      if (!append) seen = key;
      const n = tbody.children.length;
      table.hidden = !n;
      status.hidden = !!n;
      status.classList.remove('error');
      if (!n) {
        setText(status, filter.status || filter.created_after || filter.created_before
          ? 'No workflows of queue ' + queue + ' match these filters.'
          : 'No workflows in queue ' + queue + ' (finished ones expire after the retention). Submit one with dtq workflow submit or POST /api/v1/workflows.');
      }
      setText(summary, n ? num(n) + (cursor ? '+' : '') + ' shown.' : '');
      more.hidden = !cursor;
    } catch (e) {
      status.hidden = false;
      status.classList.add('error');
      setText(status, 'Could not load the workflows: ' + e.message);
    } finally {
      loading = false;
      more.disabled = false;
    }
  };
  more.addEventListener('click', () => load(true));
  const poll = setInterval(() => { if (pages <= 1) load(false); }, 5000);

  api.get('api/v1/queues').then((res) => {
    const names = (res.queues || []).map((q) => q.name);
    if (!names.includes(queue)) names.unshift(queue);
    replace(qSel, names.map((n) => h('option', { value: n, selected: n === queue }, n)));
  }).catch(() => {});
  load(false);
  return () => clearInterval(poll);
}
