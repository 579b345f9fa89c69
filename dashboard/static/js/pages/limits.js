// Limits: each limit — a queue's own, a task type's or a limit key's in
// it — with its concurrency limit (leases in use against it), rate limit,
// the tasks waiting, a RetryAfter pause and what a start does when it is
// full, with Edit and Remove, and New limit; the fairness groups of each
// queue with their weights (Set a group weight, Edit, Reset); and the
// order keys in use, per queue, each with its task in flight and how many
// wait; refreshed every 5 s.

import { h, replace, setText, routeHref, taskHref } from '../dom.js';
import { timeEl, plural } from '../fmt.js';
import { openForm, num, FieldError } from '../form.js';

export function mount(main, ctx) {
  document.title = 'Limits · dtq';
  const { api, act } = ctx;
  const status = h('p', { class: 'state', role: 'status' }, 'Loading limits…');
  const tbody = h('tbody');
  const table = h('table', { class: 'rtable limits', hidden: true },
    h('caption', { class: 'sr-only' }, 'Limits'),
    h('thead', {}, h('tr', {}, ['Queue', 'Limit of', 'Running at once', 'Rate', 'Waiting', 'Paused until', ''].map((c) => h('th', { scope: 'col' }, c)))),
    tbody);
  const summary = h('span', { class: 'muted' });
  const orderStatus = h('p', { class: 'state', role: 'status' }, 'Loading order keys…');
  const orderBody = h('tbody');
  const orderTable = h('table', { class: 'rtable order-keys', hidden: true },
    h('caption', { class: 'sr-only' }, 'Order keys in use'),
    h('thead', {}, h('tr', {}, ['Queue', 'Order key', 'In flight', 'Waiting'].map((c) => h('th', { scope: 'col' }, c)))),
    orderBody);
  const orderMore = h('div');
  const newBtn = h('button', { type: 'button', class: 'btn btn-primary', dataset: { need: 'admin' }, id: 'new-limit' }, 'New limit');
  newBtn.addEventListener('click', () => edit(null));
  const groupStatus = h('p', { class: 'state', role: 'status' }, 'Loading groups…');
  const groupBody = h('tbody');
  const groupTable = h('table', { class: 'rtable groups', hidden: true },
    h('caption', { class: 'sr-only' }, 'Fairness groups'),
    h('thead', {}, h('tr', {}, ['Queue', 'Group', 'Weight', 'Waiting', ''].map((c) => h('th', { scope: 'col' }, c)))),
    groupBody);
  const groupBtn = h('button', { type: 'button', class: 'btn', dataset: { need: 'admin' }, id: 'new-group' }, 'Set a group weight');
  groupBtn.addEventListener('click', () => editGroup(null));
  replace(main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Limits'),
      h('p', { class: 'muted' }, 'Flow control across every worker: how many of a queue\'s tasks run at once, and how often they start. ', summary)),
    h('section', { class: 'card' }, h('div', { class: 'card-actions' }, newBtn), status, h('div', { class: 'table-wrap' }, table)),
    h('section', { class: 'card', 'aria-labelledby': 'groups-h', id: 'groups' }, h('h2', { id: 'groups-h' }, 'Fairness groups'),
      h('p', { class: 'muted small card-help' }, 'The groups of a queue take turns; a group of weight 3 gets three turns to another\'s one (1 by default). Groups with a weight set or tasks waiting.'),
      h('div', { class: 'card-actions' }, groupBtn), groupStatus, h('div', { class: 'table-wrap' }, groupTable)),
    h('section', { class: 'card', 'aria-labelledby': 'okeys-h', id: 'order-keys' }, h('h2', { id: 'okeys-h' }, 'Ordered keys'),
      h('p', { class: 'muted small card-help' }, 'Order keys with a task in flight: of the tasks of one key in a queue, one at a time is in flight, the others wait in submission order. The first 100 keys of each queue.'),
      orderStatus, h('div', { class: 'table-wrap' }, orderTable), orderMore));

  const rows = new Map(); // limit key (see limitsOf) -> row

  // limitsOf lists the limits of one queue's answer: its own (if set),
  // then its task types' and limit keys'.
  const limitsOf = (l, queued) => {
    const out = [];
    if (l.max_running > 0 || l.rate > 0) {
      out.push({ key: l.queue, queue: l.queue, of: 'the queue', scope: 'queue', name: '', lim: l, waiting: queued, path: 'api/v1/limits/' + api.seg(l.queue),
        done: 'Queue ' + l.queue + ' has no limits of its own now.' });
    }
    for (const sc of l.scopes || []) {
      const isType = !!sc.task_type;
      const name = isType ? sc.task_type : sc.limit_key;
      const of = isType ? 'type ' + name : (name === '*' ? 'each limit key' : 'limit key ' + name);
      out.push({ key: l.queue + ' ' + of, queue: l.queue, of, scope: isType ? 'type' : 'key', name, lim: sc, waiting: sc.waiting,
        path: 'api/v1/limits/' + api.seg(l.queue) + (isType ? '/types/' : '/keys/') + api.seg(name),
        done: 'The limits of ' + of + ' in queue ' + l.queue + ' are removed: its tasks start as workers have room.' });
    }
    return out;
  };

  const row = (e) => {
    let r = rows.get(e.key);
    const l = e.lim;
    if (!r) {
      r = {
        meter: h('meter', { min: 0, max: 1, value: 0 }), use: h('span'), onFull: h('span', { class: 'on-full muted small' }),
        rate: h('span'), waiting: h('span'), paused: h('span'),
        btn: h('button', { type: 'button', class: 'btn btn-small', dataset: { need: 'admin', remove: '' } }, 'Remove'),
        editBtn: h('button', { type: 'button', class: 'btn btn-small', dataset: { need: 'admin', edit: '' } }, 'Edit'),
      };
      r.tr = h('tr', { dataset: { limit: e.key } },
        h('td', { dataset: { label: 'Queue' } }, h('a', { href: routeHref('tasks', { queue: e.queue }) }, e.queue)),
        h('td', { dataset: { label: 'Limit of' } }, e.of),
        h('td', { dataset: { label: 'Running at once' } }, r.meter, ' ', r.use, r.onFull),
        h('td', { dataset: { label: 'Rate' } }, r.rate),
        h('td', { dataset: { label: 'Waiting' } }, r.waiting),
        h('td', { dataset: { label: 'Paused until' } }, r.paused),
        h('td', {}, h('div', { class: 'actions' }, r.btn, r.editBtn)));
      const what = e.of === 'the queue' ? 'queue ' + e.queue : e.of + ' in queue ' + e.queue;
      r.btn.setAttribute('aria-label', 'Remove the limits of ' + what);
      r.editBtn.setAttribute('aria-label', 'Edit the limits of ' + what);
      r.btn.addEventListener('click', () => remove(r));
      r.editBtn.addEventListener('click', () => edit(r.e));
      rows.set(e.key, r);
    }
    r.e = e;
    if (l.max_running > 0) {
      r.meter.hidden = false;
      r.meter.max = l.max_running;
      r.meter.value = Math.min(l.in_use, l.max_running);
      setText(r.use, l.in_use + ' / ' + l.max_running);
    } else {
      r.meter.hidden = true;
      replace(r.use, h('span', { class: 'muted' }, 'no limit'));
    }
    const rule = ON_FULL[l.on_full];
    r.onFull.hidden = !rule;
    setText(r.onFull, rule ? ' · when full: ' + rule : '');
    if (l.rate > 0) {
      setText(r.rate, l.rate + ' per ' + l.per_seconds + ' s' + (l.burst > 1 ? ', bursts of ' + l.burst : ''));
    } else {
      replace(r.rate, h('span', { class: 'muted' }, 'no limit'));
    }
    setText(r.waiting, e.waiting === undefined ? '–' : String(e.waiting));
    replace(r.paused, l.paused_until ? timeEl(l.paused_until) : h('span', { class: 'muted' }, '–'));
    return r;
  };

  const remove = async (r) => {
    const res = await act(r.btn, () => api.del(r.e.path), r.e.done);
    if (res) load();
  };

  // edit opens the limit form: e (a row's limit) prefilled, or a new one.
  const edit = async (e) => {
    const l = e ? e.lim : {};
    const res = await openForm({
      name: 'limit',
      title: e ? 'Edit the limits of ' + (e.scope === 'queue' ? 'queue ' + e.queue : e.of + ' in queue ' + e.queue) : 'New limit',
      intro: 'At least a concurrency limit or a rate. The limits replace those it had: a field left empty is removed.',
      submit: e ? 'Save' : 'Create',
      fields: [
        { name: 'queue', label: 'Queue', value: e ? e.queue : '', readonly: !!e, required: true },
        { name: 'scope', label: 'Limit of', type: 'select', value: e ? e.scope : 'queue', readonly: !!e,
          options: [['queue', 'the queue itself'], ['type', 'a task type'], ['key', 'a limit key']] },
        { name: 'name', label: 'Task type or limit key', value: e ? e.name : '', readonly: !!e, help: 'Empty for the queue itself; * for each limit key.' },
        { name: 'max_running', label: 'Running at once (max_running)', type: 'number', value: l.max_running > 0 ? String(l.max_running) : '' },
        { name: 'rate', label: 'Starts (rate)', type: 'number', value: l.rate > 0 ? String(l.rate) : '' },
        { name: 'per_seconds', label: 'Per seconds (per_seconds)', type: 'number', value: l.rate > 0 ? String(l.per_seconds) : '', placeholder: '1' },
        { name: 'burst', label: 'Burst', type: 'number', value: l.rate > 0 && l.burst > 1 ? String(l.burst) : '', placeholder: '1' },
        { name: 'on_full', label: 'When full (on_full)', type: 'select', value: l.on_full && l.on_full !== 'queue' ? l.on_full : '',
          options: [['', 'queue (wait for room)'], ['cancel_running', 'cancel running'], ['cancel_newest', 'cancel newest'], ['replace_waiting', 'replace waiting']],
          help: 'A task type\'s or limit key\'s limits only.' },
      ],
      onSubmit: (v) => {
        if (!v.queue) throw new FieldError('queue', 'is required');
        if (v.scope !== 'queue' && !v.name) throw new FieldError('name', 'is required for a task type\'s or limit key\'s limits');
        const body = { max_running: num(v, 'max_running'), rate: num(v, 'rate'), per_seconds: num(v, 'per_seconds'), burst: num(v, 'burst'),
          on_full: v.on_full || undefined };
        const path = 'api/v1/limits/' + api.seg(v.queue) + (v.scope === 'type' ? '/types/' + api.seg(v.name) : v.scope === 'key' ? '/keys/' + api.seg(v.name) : '');
        return api.putJSON(path, body);
      },
    });
    if (res) {
      ctx.notify('ok', e ? 'The limits are saved.' : 'The limit is created.');
      load();
    }
  };

  // editGroup opens the group weight form: g ({queue, group, weight})
  // prefilled, or a new one.
  const editGroup = async (g) => {
    const res = await openForm({
      name: 'group',
      title: g ? 'Weight of group ' + g.group + ' in queue ' + g.queue : 'Set a group weight',
      submit: 'Save',
      fields: [
        { name: 'queue', label: 'Queue', value: g ? g.queue : '', readonly: !!g, required: true },
        { name: 'group', label: 'Group', value: g ? g.group : '', readonly: !!g, required: true },
        { name: 'weight', label: 'Weight', type: 'number', value: g ? String(g.weight) : '', help: 'Turns of this group to another\'s one, 1 to 100.' },
      ],
      onSubmit: (v) => {
        if (!v.queue) throw new FieldError('queue', 'is required');
        if (!v.group) throw new FieldError('group', 'is required');
        return api.putJSON('api/v1/queues/' + api.seg(v.queue) + '/groups/' + api.seg(v.group), { weight: num(v, 'weight') });
      },
    });
    if (res) {
      ctx.notify('ok', 'Group ' + res.group + ' has weight ' + res.weight + '.');
      load();
    }
  };

  // loadGroups lists the groups of each queue (the first 50 queues).
  let groupSeen = '';
  const loadGroups = async (queues) => {
    const lists = await Promise.all(queues.slice(0, 50).map((q) => api.get('api/v1/queues/' + api.seg(q.name) + '/groups')
      .then((r) => (r.groups || []).map((g) => ({ queue: q.name, ...g })))
      .catch(() => [])));
    const all = lists.flat();
    const seen = JSON.stringify(all);
    if (seen === groupSeen) return; // unchanged: keep focus
    groupSeen = seen;
    replace(groupBody, all.map((g) => {
      const editB = h('button', { type: 'button', class: 'btn btn-small', dataset: { need: 'admin', edit: '' },
        'aria-label': 'Edit the weight of group ' + g.group + ' in queue ' + g.queue, on: { click: () => editGroup(g) } }, 'Edit');
      const resetB = h('button', { type: 'button', class: 'btn btn-small', dataset: { need: 'admin', remove: '' },
        'aria-label': 'Reset the weight of group ' + g.group + ' in queue ' + g.queue + ' to 1' }, 'Reset');
      resetB.addEventListener('click', async () => {
        const ok = await act(resetB, () => api.del('api/v1/queues/' + api.seg(g.queue) + '/groups/' + api.seg(g.group)),
          'Group ' + g.group + ' has the default weight, 1.');
        if (ok) load();
      });
      return h('tr', { dataset: { group: g.queue + ' ' + g.group } },
        h('td', { dataset: { label: 'Queue' } }, h('a', { href: routeHref('tasks', { queue: g.queue }) }, g.queue)),
        h('td', { dataset: { label: 'Group' }, class: 'mono' }, g.group),
        h('td', { dataset: { label: 'Weight' } }, String(g.weight)),
        h('td', { dataset: { label: 'Waiting' } }, String(g.waiting ?? 0)),
        h('td', {}, h('div', { class: 'actions' }, editB, resetB)));
    }));
    groupTable.hidden = !all.length;
    groupStatus.hidden = !!all.length;
    setText(groupStatus, all.length ? '' : 'No fairness groups: tasks submitted with a group, or a weight set, show here.');
  };

  const load = async () => {
    try {
      const [res, qs] = await Promise.all([api.get('api/v1/limits'), api.get('api/v1/queues')]);
      loadOrderKeys(qs.queues || []).catch((e) => setText(orderStatus, 'Could not load the order keys: ' + e.message));
      loadGroups(qs.queues || []).catch((e) => setText(groupStatus, 'Could not load the groups: ' + e.message));
      const queued = new Map((qs.queues || []).map((q) => [q.name, q.queued]));
      const list = (res.limits || []).flatMap((l) => limitsOf(l, queued.get(l.queue)));
      const keep = new Set();
      list.forEach((e, i) => {
        const r = row(e);
        keep.add(e.key);
        if (tbody.children[i] !== r.tr) tbody.insertBefore(r.tr, tbody.children[i] || null);
      });
      for (const [k, r] of rows) if (!keep.has(k)) { r.tr.remove(); rows.delete(k); }
      table.hidden = !list.length;
      status.hidden = !!list.length;
      status.classList.remove('error');
      setText(summary, list.length ? plural(list.length, 'limit') + '.' : '');
      if (!list.length) {
        replace(status, 'No limits. Set one with New limit, ', h('code', {}, 'dtq limit set QUEUE --max-running N'), ' or ',
          h('code', {}, '--rate N --per 1s'), ', or a PUT to /api/v1/limits/{queue}.');
      }
    } catch (e) {
      status.hidden = false;
      status.classList.add('error');
      setText(status, 'Could not load the limits: ' + e.message);
    }
  };
  // loadOrderKeys reads the order keys in use of each queue that has tasks
  // in flight (a key is held only by a task queued, scheduled or running,
  // so an idle queue has none): one request per such queue, 100 keys each.
  let orderSeen = '';
  const loadOrderKeys = async (queues) => {
    const busy = queues.filter((q) => q.queued + q.scheduled + q.running > 0).map((q) => q.name);
    const pages = await Promise.all(busy.map((name) =>
      api.get('api/v1/queues/' + api.seg(name) + '/order-keys', { limit: '100' })
        .then((p) => ({ queue: name, keys: p.keys || [], more: !!p.next_cursor }))
        .catch((e) => ({ queue: name, keys: [], error: e.message }))));
    const shown = pages.filter((p) => p.keys.length || p.error);
    const seen = JSON.stringify(shown);
    if (seen === orderSeen) return; // unchanged: keep focus
    orderSeen = seen;
    replace(orderBody, shown.flatMap((p) => p.keys.map((k) => h('tr', { dataset: { order: p.queue + ' ' + k.key } },
      h('td', { dataset: { label: 'Queue' } }, h('a', { href: routeHref('tasks', { queue: p.queue }) }, p.queue)),
      h('td', { dataset: { label: 'Order key' }, class: 'mono' }, k.key),
      h('td', { dataset: { label: 'In flight' } }, h('a', { class: 'mono', href: taskHref(k.in_flight) }, k.in_flight)),
      h('td', { dataset: { label: 'Waiting' } }, String(k.waiting))))));
    const n = shown.reduce((a, p) => a + p.keys.length, 0);
    orderTable.hidden = !n;
    replace(orderMore, shown.filter((p) => p.more || p.error).map((p) => h('p', { class: 'muted small' }, p.error
      ? 'Could not read the order keys of ' + p.queue + ': ' + p.error
      : 'Queue ' + p.queue + ' has more keys in use: ', p.error ? null : h('code', {}, 'dtq queue order-keys ' + p.queue), p.error ? null : ' lists them all.')));
    orderStatus.hidden = !!n;
    setText(orderStatus, n ? '' : 'No order keys in use.');
  };

  const poll = setInterval(load, 5000);
  load();
  return () => clearInterval(poll);
}

// ON_FULL words a limit's on_full rule other than the default, queue.
const ON_FULL = { cancel_running: 'cancel running', cancel_newest: 'cancel newest', replace_waiting: 'replace waiting' };
