// The tasks page's bulk actions (admin): a checkbox per row and one for the
// loaded rows, "select all matching the filter", and Cancel, Requeue
// (dead letters) and Delete (finished tasks) over the selection or the
// filter — counted first (a dry run), confirmed with the count, then the
// result (POST /api/v1/tasks/bulk).

import { h, setText } from '../dom.js';
import { num } from '../fmt.js';

const ACTIONS = [
  { action: 'cancel', label: 'Cancel', past: 'Cancelled', takes: 'queued, scheduled or running', danger: true },
  { action: 'requeue', label: 'Requeue', past: 'Requeued', takes: 'dead', danger: false },
  { action: 'delete', label: 'Delete', past: 'Deleted', takes: 'succeeded or cancelled', danger: true },
];

const REASONS = {
  not_found: 'not found', finished: 'finished already', cancelled_already: 'cancelled already', not_dead: 'not dead',
  not_finished: 'not finished', dead_letter: 'a dead letter (requeue or discard it)', changed: 'changed meanwhile',
};

// bulkBar returns the bar and the hooks the table calls: check(id) makes a
// row's checkbox, all is the header's checkbox, forget(id) drops a row
// that left (and its selection), show() updates the bar. apiFilter is the page's filter as the bulk
// filter (null when it cannot be one: the suspended filter); done() reloads.
export function bulkBar(ctx, queue, apiFilter, done) {
  const { api } = ctx;
  const picked = new Set();
  let matching = false; // "all matching the filter" instead of the rows picked
  const boxes = new Map(); // id -> checkbox

  const count = h('span', { id: 'bulk-count', role: 'status' });
  const out = h('p', { class: 'muted small', id: 'bulk-result', role: 'status' });
  const allMatching = h('button', { type: 'button', class: 'btn', id: 'bulk-all' }, 'Select all matching the filter');
  const clearBtn = h('button', { type: 'button', class: 'btn', id: 'bulk-clear' }, 'Clear');
  const buttons = ACTIONS.map((a) => h('button', { type: 'button', class: 'btn ' + (a.danger ? 'btn-danger' : 'btn-primary'), id: 'bulk-' + a.action }, a.label + '…'));
  const all = h('input', { type: 'checkbox', id: 'bulk-page', 'aria-label': 'Select the tasks shown' });

  const show = () => {
    const n = picked.size;
    setText(count, matching ? 'All tasks of ' + queue + ' that match the filter' : n ? num(n) + ' selected' : 'None selected');
    buttons.forEach((b) => { b.disabled = !matching && n === 0; });
    clearBtn.disabled = !matching && n === 0;
    allMatching.hidden = !apiFilter() || matching;
    for (const [id, box] of boxes) box.checked = matching || picked.has(id);
    all.checked = matching || (boxes.size > 0 && [...boxes.keys()].every((id) => picked.has(id)));
  };
  const check = (id) => {
    const box = h('input', { type: 'checkbox', class: 'bulk-pick', 'aria-label': 'Select ' + id });
    box.addEventListener('change', () => {
      if (matching) { matching = false; for (const k of boxes.keys()) picked.add(k); }
      if (box.checked) picked.add(id); else picked.delete(id);
      show();
    });
    boxes.set(id, box);
    box.checked = matching || picked.has(id);
    return box;
  };
  const forget = (id) => { boxes.delete(id); picked.delete(id); };
  all.addEventListener('change', () => {
    matching = false;
    for (const id of boxes.keys()) { if (all.checked) picked.add(id); else picked.delete(id); }
    show();
  });
  allMatching.addEventListener('click', () => { matching = true; show(); });
  clearBtn.addEventListener('click', () => { matching = false; picked.clear(); setText(out, ''); show(); });

  ACTIONS.forEach((a, i) => {
    const btn = buttons[i];
    btn.addEventListener('click', async () => {
      const body = matching ? { action: a.action, filter: apiFilter() } : { action: a.action, ids: [...picked] };
      const counted = await ctx.act(btn, () => api.postJSON('api/v1/tasks/bulk', Object.assign({ dry_run: true }, body)), null);
      if (!counted) return;
      const would = counted.matched - counted.skipped_count;
      if (would === 0) {
        setText(out, 'Nothing to ' + a.action + ': ' + (matching ? 'no ' + a.takes + ' task matches the filter.' : 'none of the ' + num(counted.matched) + ' selected is ' + a.takes + '.'));
        return;
      }
      const ok = await ctx.confirm({
        title: a.label + ' ' + num(would) + (counted.more ? '+' : '') + ' task' + (would === 1 ? '' : 's') + '?',
        text: (matching ? 'The ' + a.takes + ' tasks of queue ' + queue + ' that match the filter' : 'The ' + a.takes + ' tasks selected') +
          (counted.skipped_count ? ' (' + num(counted.skipped_count) + ' selected are skipped)' : '') +
          ', at most 100 per second' + (counted.more ? ', up to 1,000 this time: run it again for the rest' : '') +
          '. Recorded in the audit log.' + (a.action === 'delete' ? ' Deleted tasks are gone for good.' : ''),
        ok: a.label, danger: a.danger,
      });
      if (!ok) return;
      const r = await ctx.act(btn, () => api.postJSON('api/v1/tasks/bulk', body), null);
      if (!r) return;
      const why = r.skipped.length ? ' Skipped: ' + r.skipped.slice(0, 5).map((s) => s.id + ' (' + (REASONS[s.reason] || s.reason) + ')').join(', ') +
        (r.skipped_count > 5 ? ' and ' + num(r.skipped_count - 5) + ' more' : '') + '.' : '';
      const text = a.past + ' ' + num(r.done) + ' of ' + num(r.matched) + ' tasks.' + why + (r.more ? ' More match: run it again.' : '');
      setText(out, text);
      ctx.notify('ok', a.past + ' ' + num(r.done) + ' tasks.');
      matching = false;
      picked.clear();
      show();
      done();
    });
  });

  const bar = h('section', { class: 'card bulk', 'aria-label': 'Act on many tasks', dataset: { need: 'admin' } },
    h('div', { class: 'toolbar' }, count, allMatching, clearBtn, h('div', { class: 'actions' }, buttons)), out);
  show();
  return { bar, check, forget, all, show };
}

// bulkFilter is the page's filter as POST /api/v1/tasks/bulk takes it, or
// null for the suspended filter (which it does not take).
export function bulkFilter(filter) {
  if (filter.suspended) return null;
  const f = { queue: filter.queue };
  if (filter.status) f.status = filter.status;
  if (filter.type) f.task_type = filter.type;
  if (filter.id_prefix) f.id_prefix = filter.id_prefix;
  if (filter.error) f.error_contains = filter.error;
  if (filter.created_after) f.created_after = filter.created_after;
  if (filter.created_before) f.created_before = filter.created_before;
  return f;
}
