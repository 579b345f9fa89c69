// Workflow detail: the workflow's status, times and error, a progress bar
// of its task nodes, and a drawing of its nodes — a chain's nodes left to
// right, a parallel node's children stacked with its callbacks after it —
// each task node a box with its type, number and status that links to
// its task once it has one; and Cancel while it runs.

import { h, replace, throttle, taskHref, routeHref } from '../dom.js';
import { wfBadge, wfColour, timeEl, duration, num, plural } from '../fmt.js';
import { view, rawField } from '../json.js';

// BUCKETS are the progress counts (the API's keys), in the order the bar
// draws them, with their words.
const BUCKETS = [
  ['succeeded', 'succeeded'], ['failed', 'failed'], ['cancelled', 'cancelled'],
  ['skipped', 'skipped'], ['active', 'active'], ['pending', 'pending'],
];

export function mount(main, ctx, route) {
  const id = route.id;
  document.title = 'Workflow ' + id + ' · dtq';
  const { api, stream } = ctx;

  const head = h('div', { class: 'page-head' });
  const body = h('div', { class: 'workflow-body' }, h('p', { class: 'state', role: 'status' }, 'Loading workflow…'));
  replace(main,
    h('p', { class: 'crumbs' }, h('a', { href: routeHref('workflows', { queue: id.slice(0, Math.max(0, id.lastIndexOf('-'))) }) }, 'Workflows'), ' / workflow ', h('span', { class: 'mono' }, id)),
    head, body);

  const cancelBtn = h('button', { type: 'button', class: 'btn btn-danger', id: 'cancel-workflow', dataset: { need: 'submit' } }, 'Cancel workflow');
  cancelBtn.addEventListener('click', async () => {
    const ok = await ctx.confirm({
      title: 'Cancel this workflow?',
      text: 'No node of workflow ' + id + ' starts any more, and the tasks of its active nodes are cancelled (a running one is told to stop).',
      ok: 'Cancel workflow', danger: true,
    });
    if (!ok) return;
    const w = await ctx.act(cancelBtn, () => api.post('api/v1/workflows/' + api.seg(id) + '/cancel'),
      (w) => w.status === 'CANCELLED' ? 'Workflow cancelled.' : 'Cancellation requested: its running nodes are stopping.');
    if (w) load();
  });

  let last = null, lastText = '';
  const show = (w, text) => {
    if (text === lastText) return; // nothing changed: keep focus and selection
    last = w;
    lastText = text;
    document.title = 'Workflow ' + w.id + ' · dtq';
    const running = w.status === 'RUNNING';
    const actions = h('div', { class: 'actions' },
      running && !w.cancel_requested ? cancelBtn : null,
      h('a', { class: 'btn', href: routeHref('tasks', { queue: w.queue }) }, 'Queue ' + w.queue));
    replace(head,
      h('h1', {}, 'Workflow ', h('span', { class: 'mono task-id' }, w.id)),
      h('div', { class: 'head-row' }, h('span', { id: 'wf-status' }, wfBadge(w.status)),
        running && w.cancel_requested ? h('span', { class: 'badge b-scheduled' }, 'cancel requested') : null, actions));

    const p = w.progress || {};
    const dl = (pairs) => h('dl', { class: 'facts' }, pairs.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
    const facts = dl([
      ['Queue', h('a', { href: routeHref('tasks', { queue: w.queue }) }, w.queue)],
      ['Nodes', plural(p.total || 0, 'task node')],
      ['Created', timeEl(w.created_at)],
      w.finished_at ? ['Finished', h('span', {}, timeEl(w.finished_at),
        h('span', { class: 'muted' }, ' (took ' + duration(Date.parse(w.finished_at) - Date.parse(w.created_at)) + ')'))] : null,
    ]);
    const result = rawField(text, 'result');
    replace(body,
      h('div', { class: 'grid2' },
        h('section', { class: 'card', 'aria-labelledby': 'wf-facts-h' }, h('h2', { id: 'wf-facts-h' }, 'Details'), facts),
        h('section', { class: 'card', 'aria-labelledby': 'wf-progress-h', id: 'wf-progress' },
          h('h2', { id: 'wf-progress-h' }, 'Progress'), progress(p))),
      h('section', { class: 'card', 'aria-labelledby': 'wf-graph-h' },
        h('h2', { id: 'wf-graph-h' }, 'Nodes'),
        h('p', { class: 'muted small wf-help' }, 'A chain runs its nodes one after another, along the arrows; a parallel node runs its children at once, then its callbacks. ' +
          'Each box is a task node (its type, number and status); a started one links to its task.'),
        h('div', { class: 'wf-drawing', id: 'wf-graph' }, h('div', { class: 'wf-root' }, node(w.root)))),
      w.error ? h('section', { class: 'card', 'aria-labelledby': 'wf-err-h' },
        h('h2', { id: 'wf-err-h' }, 'Error'), h('pre', { class: 'error-text', id: 'wf-error' }, w.error)) : null,
      result !== undefined ? h('section', { class: 'card', 'aria-labelledby': 'wf-result-h', id: 'wf-result' },
        h('h2', { id: 'wf-result-h' }, 'Result'), view(result, 'Result')) : null);
  };

  const load = async () => {
    try {
      const { data, text } = await api.get('api/v1/workflows/' + api.seg(id), null, { raw: true });
      show(data, text);
    } catch (e) {
      if (e.status === 404) {
        replace(head, h('h1', {}, 'No such workflow'));
        replace(body, h('p', { class: 'state' }, 'There is no workflow ', h('span', { class: 'mono' }, id),
          ': the id is unknown, or the workflow finished and expired after the retention.'));
      } else if (last) {
        ctx.notify('error', 'Could not refresh the workflow: ' + e.message);
      } else {
        replace(body, h('p', { class: 'state error', role: 'alert' }, 'Could not load the workflow: ' + e.message));
      }
    }
  };

  // While it runs, any event of its queue may be one of its nodes (a node
  // that starts gets a task id only then): reload, at most twice a second.
  const refresh = throttle(load, 500);
  const offEvent = stream.onEvent((e) => { if (last && last.status === 'RUNNING' && e.queue === last.queue) refresh(); });
  const offState = stream.onState((st, info) => { if (st === 'live' && info.reconnected) refresh(); });
  const poll = setInterval(() => { if (last && last.status === 'RUNNING') refresh(); }, 5000);
  load();
  return () => {
    offEvent();
    offState();
    refresh.cancel();
    clearInterval(poll);
  };
}

// progress is the bar of the task nodes by status (each segment as wide
// as its count) and its legend, which says the numbers.
function progress(p) {
  const total = p.total || 0;
  const ended = (p.succeeded || 0) + (p.failed || 0) + (p.cancelled || 0) + (p.skipped || 0);
  const bar = h('div', { class: 'wf-bar', 'aria-hidden': 'true' }, BUCKETS.filter(([k]) => p[k] > 0).map(([k, word]) => {
    const seg = h('span', { class: 'wf-seg seg-' + k, title: num(p[k]) + ' ' + word });
    seg.style.flexGrow = String(p[k]);
    return seg;
  }));
  return [
    h('p', { class: 'wf-ended' }, h('strong', {}, num(ended)), ' of ' + plural(total, 'task node') + ' ended'),
    bar,
    h('ul', { class: 'legend wf-legend' }, BUCKETS.map(([k, word]) => h('li', { dataset: { count: k }, class: p[k] ? null : 'wf-none' },
      h('span', { class: 'swatch seg-' + k, 'aria-hidden': 'true' }), h('span', { class: 'legend-value' }, num(p[k] || 0)), ' ' + word))),
  ];
}

// node draws a node of any kind.
function node(n) {
  if (!n) return null;
  if (n.kind === 'task') return taskBox(n);
  if (n.kind === 'chain') return chain(n);
  if (n.kind === 'parallel') return parallel(n);
  return h('div', { class: 'wf-task st-unknown', dataset: { node: String(n.node), status: String(n.status || '') } },
    h('span', { class: 'wf-type' }, 'node ' + n.node + ' (' + String(n.kind) + ')'));
}

// arrow is the connector between nodes that follow one another.
function arrow() {
  return h('span', { class: 'wf-arrow', 'aria-hidden': 'true' });
}

// taskBox is a task node: its type, number, status and why it failed or
// did not run; a link to its task once it has one.
function taskBox(n) {
  const status = String(n.status || '');
  const attrs = {
    class: 'wf-task st-' + wfColour(status),
    dataset: { node: String(n.node), status, kind: 'task' },
    title: n.error || (n.task_id ? 'Task ' + n.task_id : 'No task yet: the node has not started'),
  };
  const inner = [
    h('span', { class: 'wf-type mono' }, n.task_type || '?'),
    h('span', { class: 'wf-meta' }, h('span', { class: 'wf-num' }, 'node ' + n.node), wfBadge(status)),
    n.error ? h('span', { class: 'wf-err' }, n.error) : null,
  ];
  if (n.task_id) return h('a', { ...attrs, href: taskHref(n.task_id) }, inner);
  return h('div', attrs, inner);
}

// chain draws its nodes in a row, arrows between them.
function chain(n) {
  const out = [];
  (n.nodes || []).forEach((s, i) => {
    if (i) out.push(arrow());
    out.push(node(s));
  });
  return h('div', {
    class: 'wf-chain', role: 'group', 'aria-label': 'Chain, node ' + n.node + ', ' + n.status,
    dataset: { node: String(n.node), status: String(n.status || ''), kind: 'chain' },
  }, out);
}

// parallel draws a parallel node: its children stacked in a panel, then
// an arrow to its callbacks, each under its label.
function parallel(n) {
  const kids = n.children || [];
  const panel = h('div', {
    class: 'wf-parallel st-' + wfColour(n.status), role: 'group',
    'aria-label': 'Parallel node of ' + plural(kids.length, 'branch', 'branches') + ', node ' + n.node + ', ' + n.status,
    dataset: { node: String(n.node), status: String(n.status || ''), kind: 'parallel' },
  },
  h('div', { class: 'wf-parallel-head', title: n.error || null },
    h('span', {}, 'parallel · node ' + n.node + ' · ' + plural(kids.length, 'branch', 'branches')), wfBadge(n.status)),
  h('div', { class: 'wf-branches' }, kids.map((c) => node(c))));
  const callbacks = [['on success', 'on_success', n.on_success], ['on complete', 'on_complete', n.on_complete]].filter(([, , c]) => c);
  if (!callbacks.length) return panel;
  return h('div', { class: 'wf-with-callbacks' }, panel, arrow(),
    h('div', { class: 'wf-callbacks' }, callbacks.map(([label, key, c]) =>
      h('div', { class: 'wf-callback', dataset: { callback: key } }, h('span', { class: 'wf-cb-label' }, label), node(c)))));
}
