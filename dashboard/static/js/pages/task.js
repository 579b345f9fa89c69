// Task detail: the task's fields (its trace id linked to the operator's
// tracing UI), payload and result as readable JSON, a timeline, the
// attempt history with errors, its durable steps, what a suspended task
// waits for, and cancel / requeue / run now. A node of a workflow
// links to it and shows what the node before produced. A task of an order
// key shows the key's line: its task in flight and the next waiting.

import { h, replace, setText, throttle, routeHref, taskHref, workflowHref } from '../dom.js';
import { badge, outcomeBadge, outcomeColour, timeEl, stamp, duration } from '../fmt.js';
import { view, rawField } from '../json.js';

const ACTIVE = ['QUEUED', 'SCHEDULED', 'RUNNING'];

export function mount(main, ctx, route) {
  const id = route.id;
  document.title = 'Task ' + id + ' · dtq';
  const { api, stream } = ctx;

  const head = h('div', { class: 'page-head' });
  const body = h('div', { class: 'task-body' }, h('p', { class: 'state', role: 'status' }, 'Loading task…'));
  replace(main,
    h('p', { class: 'crumbs' }, h('a', { href: '#/tasks' }, 'Tasks'), ' / ', h('span', { class: 'mono' }, id)),
    head, body);

  const cancelBtn = h('button', { type: 'button', class: 'btn btn-danger', id: 'cancel-task', dataset: { need: 'submit' } }, 'Cancel task');
  const requeueBtn = h('button', { type: 'button', class: 'btn btn-primary', id: 'requeue-task', dataset: { need: 'admin' } }, 'Requeue');
  const runNowBtn = h('button', { type: 'button', class: 'btn btn-primary', id: 'run-now', dataset: { need: 'admin' } }, 'Run now');
  runNowBtn.addEventListener('click', async () => {
    const ok = await ctx.confirm({
      title: 'Run this task now?',
      text: 'Task ' + id + ' leaves the schedule and is queued at once, as if its due time had come: a sleep ends now, a wait for a signal ends as timed out.',
      ok: 'Run now',
    });
    if (!ok) return;
    const t = await ctx.act(runNowBtn, () => api.post('api/v1/tasks/' + api.seg(id) + '/run-now'),
      'Task queued: it runs in its turn.');
    if (t) load();
  });
  cancelBtn.addEventListener('click', async () => {
    const ok = await ctx.confirm({
      title: 'Cancel this task?',
      text: 'Task ' + id + ' will not run (again). If it is running now, its handler is told to stop.',
      ok: 'Cancel task', danger: true,
    });
    if (!ok) return;
    const t = await ctx.act(cancelBtn, () => api.post('api/v1/tasks/' + api.seg(id) + '/cancel'),
      (t) => t.status === 'CANCELLED' ? 'Task cancelled.' : 'Cancellation requested: the worker running it is stopping it.');
    if (t) load();
  });
  requeueBtn.addEventListener('click', async () => {
    const t = await ctx.act(requeueBtn, () => api.post('api/v1/dlq/' + api.seg(id) + '/requeue'),
      'Task requeued: it runs again with its attempts reset.');
    if (t) load();
  });

  let last = null, lastText = '';
  const show = (t, text, line) => {
    const seen = text + '\n' + JSON.stringify(line);
    if (seen === lastText) return; // nothing changed: keep focus and selection
    last = t;
    lastText = seen;
    document.title = 'Task ' + t.id + ' · dtq';
    const actions = h('div', { class: 'actions' },
      t.status === 'SCHEDULED' ? runNowBtn : null,
      ACTIVE.includes(t.status) && !t.cancel_requested ? cancelBtn : null,
      t.status === 'DEAD' ? requeueBtn : null,
      h('a', { class: 'btn', href: routeHref('tasks', { queue: t.queue }) }, 'Queue ' + t.queue),
      t.status === 'DEAD' ? h('a', { class: 'btn', href: routeHref('dlq', { queue: t.queue }) }, 'Dead letters') : null);
    replace(head,
      h('h1', {}, 'Task ', h('span', { class: 'mono task-id' }, t.id)),
      h('div', { class: 'head-row' }, h('span', { id: 'task-status' }, badge(t.status)),
        t.suspended ? suspension(t.suspended) : null,
        t.cancel_requested ? h('span', { class: 'badge b-scheduled' }, 'cancel requested') : null, actions));

    const dl = (pairs) => h('dl', { class: 'facts' }, pairs.filter(Boolean).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
    const facts = dl([
      ['Queue', h('a', { href: routeHref('tasks', { queue: t.queue }) }, t.queue)],
      ['Type', h('span', { class: 'mono' }, t.task_type)],
      t.workflow ? ['Workflow', h('span', {}, h('a', { class: 'mono', id: 'task-workflow', href: workflowHref(t.workflow) }, t.workflow),
        ' (node ' + (t.workflow_node || 0) + ')')] : null,
      ['Priority', String(t.priority)],
      t.group ? ['Group', h('span', {}, h('span', { class: 'mono' }, t.group),
        t.group_waiting ? ' (waiting for its turn)' : '')] : null,
      t.order_key ? ['Order key', h('span', { id: 'task-order-key' }, h('span', { class: 'mono' }, t.order_key),
        // a waiter the key just passed to reads waiting until the scheduler
        // moves it into its band: the key's line knows it holds the key
        t.order_waiting && !(line && line.in_flight === t.id) ? ' (waiting for the key\'s earlier tasks)' : '')] : null,
      ['Attempts', t.attempt + ' of ' + t.max_attempts + (t.crashes ? ' (' + t.crashes + ' crashed)' : '')],
      ['Timeout', duration((t.timeout_seconds || 0) * 1000)],
      ['Created', timeEl(t.created_at)],
      t.scheduled_at ? ['Due', timeEl(t.scheduled_at)] : null,
      t.started_at ? ['Started', timeEl(t.started_at)] : null,
      t.finished_at ? ['Finished', timeEl(t.finished_at)] : null,
      t.worker ? ['Worker', h('span', { class: 'mono' }, t.worker)] : null,
      t.trace_id ? ['Trace', traceFact(t.trace_id)] : null,
      t.progress ? ['Progress', h('span', { id: 'task-progress' },
        h('progress', { max: '1', value: String(t.progress.fraction), 'aria-label': 'Progress' }),
        ' ' + Math.round(t.progress.fraction * 100) + '%' + (t.progress.note ? ' · ' + t.progress.note : ''))] : null,
    ]);

    const payload = rawField(text, 'payload');
    const result = rawField(text, 'result');
    const previous = t.workflow ? rawField(text, 'previous') : undefined;
    replace(body,
      h('div', { class: 'grid2' },
        h('section', { class: 'card', 'aria-labelledby': 'facts-h' }, h('h2', { id: 'facts-h' }, 'Details'), facts),
        h('section', { class: 'card', 'aria-labelledby': 'tl-h' }, h('h2', { id: 'tl-h' }, 'Timeline'), timeline(t))),
      t.order_key ? orderLine(t, line) : null,
      t.last_error ? h('section', { class: 'card', 'aria-labelledby': 'err-h' },
        h('h2', { id: 'err-h' }, 'Last error'), h('pre', { class: 'error-text', id: 'last-error' }, t.last_error)) : null,
      h('section', { class: 'card', 'aria-labelledby': 'att-h' }, h('h2', { id: 'att-h' }, 'Attempts'), attempts(t)),
      t.steps && t.steps.length ? h('section', { class: 'card', 'aria-labelledby': 'steps-h', id: 'steps' },
        h('h2', { id: 'steps-h' }, 'Steps'),
        h('p', { class: 'muted small card-help' }, 'Durable steps the handler recorded: a later run gets each result back instead of running the step again.'),
        steps(t)) : null,
      t.workflow ? h('section', { class: 'card', 'aria-labelledby': 'prev-h', id: 'previous' },
        h('h2', { id: 'prev-h' }, 'Previous'),
        h('p', { class: 'muted small card-help' }, 'What the node before produced: the previous chain node\'s result, or for a parallel node\'s callback the outcomes of its children.'),
        previous === undefined ? h('p', { class: 'muted' }, 'None: nothing ran before this node.') : view(previous, 'Previous')) : null,
      h('div', { class: 'grid2' },
        h('section', { class: 'card', 'aria-labelledby': 'payload-h', id: 'payload' }, h('h2', { id: 'payload-h' }, 'Payload'), view(payload, 'Payload')),
        h('section', { class: 'card', 'aria-labelledby': 'result-h', id: 'result' }, h('h2', { id: 'result-h' }, 'Result'), view(result, 'Result'))));
  };

  const load = async () => {
    try {
      const { data, text } = await api.get('api/v1/tasks/' + api.seg(id), null, { raw: true });
      let line = null;
      if (data.order_key) {
        try {
          line = await api.get('api/v1/queues/' + api.seg(data.queue) + '/order-keys/' + api.seg(data.order_key));
        } catch (e) {
          line = { error: e.message };
        }
      }
      show(data, text, line);
    } catch (e) {
      if (e.status === 404) {
        replace(head, h('h1', {}, 'No such task'));
        replace(body, h('p', { class: 'state' }, 'There is no task ', h('span', { class: 'mono' }, id),
          ': the id is unknown, or the task finished and expired after the retention.'));
      } else if (last) {
        ctx.notify('error', 'Could not refresh the task: ' + e.message);
      } else {
        replace(body, h('p', { class: 'state error', role: 'alert' }, 'Could not load the task: ' + e.message));
      }
    }
  };

  const refresh = throttle(load, 300);
  const offEvent = stream.onEvent((e) => { if (e.task_id === id) refresh(); });
  const offState = stream.onState((st, info) => { if (st === 'live' && info.reconnected) refresh(); });
  const poll = setInterval(() => { if (last && ACTIVE.includes(last.status)) refresh(); }, 5000);
  load();
  return () => {
    offEvent();
    offState();
    refresh.cancel();
    clearInterval(poll);
  };
}

// traceFact is the task's trace id: a link to the operator's tracing UI
// when the server names one (--trace-url: the page's dtq-trace-url, a
// template with {trace_id}), else text.
function traceFact(id) {
  const meta = document.querySelector('meta[name="dtq-trace-url"]');
  const tmpl = meta ? meta.content : '';
  if (!/^https?:\/\//i.test(tmpl) || !/^[0-9a-f]{32}$/.test(id)) {
    return h('span', { class: 'mono', id: 'task-trace', title: 'The task\'s trace id (the server links it with --trace-url)' }, id);
  }
  return h('a', { class: 'mono', id: 'task-trace', href: tmpl.split('{trace_id}').join(id), target: '_blank', rel: 'noopener noreferrer',
    title: 'Open the task\'s trace' }, id);
}

// timeline lists what happened to the task, in time order, with the time
// since it was created.
function timeline(t) {
  const created = Date.parse(t.created_at);
  const items = [{ at: t.created_at, what: 'Submitted to ' + t.queue + ' at priority ' + t.priority, cls: 'queued' }];
  for (const e of t.history || []) {
    items.push({ at: e.started_at, what: 'Run ' + e.run + ' started' + (e.worker ? ' on ' + e.worker : ''), cls: 'running' });
    const ended = { succeeded: 'succeeded', retried: 'failed; to be retried', dead: 'failed for good', cancelled: 'cancelled', lost: 'lost with its worker', suspended: 'suspended' }[e.outcome] || e.outcome;
    const took = duration(Date.parse(e.finished_at) - Date.parse(e.started_at));
    // a suspended run's error says what it waits for: no failure
    const waits = e.outcome === 'suspended' && e.error ? ': ' + e.error : '';
    items.push({ at: e.finished_at, what: 'Run ' + e.run + ' ' + ended + waits + ' (ran ' + took + ')', cls: outcomeColour(e.outcome) || 'queued', error: waits ? '' : e.error });
  }
  if (runningNow(t)) {
    items.push({ at: t.started_at, what: 'Run ' + (t.attempt || '') + ' started' + (t.worker ? ' on ' + t.worker : '') + ' (running now)', cls: 'running' });
  }
  if (t.status === 'SCHEDULED' && t.scheduled_at) {
    const s = t.suspended;
    const what = !s ? 'Due to run'
      : s.for === 'sleep' ? 'Due to run: sleep ' + s.name + ' ends' : 'Due to run: the wait for signal ' + s.name + ' times out';
    items.push({ at: t.scheduled_at, what, cls: 'scheduled', future: true });
  }
  if (t.status === 'CANCELLED' && t.finished_at && !(t.history || []).some((e) => e.outcome === 'cancelled')) {
    items.push({ at: t.finished_at, what: 'Cancelled', cls: 'cancelled' });
  }
  const lastRun = (t.history || [])[(t.history || []).length - 1];
  if (t.status === 'DEAD') {
    items.push({ at: t.finished_at, what: 'Dead: in the dead-letter stream of ' + t.queue + (lastRun && lastRun.outcome === 'dead' ? '' : ' (' + (t.last_error || 'no run') + ')'), cls: 'dead' });
  }
  items.sort((a, b) => Date.parse(a.at || 0) - Date.parse(b.at || 0));
  return h('ol', { class: 'timeline' }, items.filter((i) => i.at).map((i) =>
    h('li', { class: 't-' + i.cls },
      h('span', { class: 'tl-dot', 'aria-hidden': 'true' }),
      h('span', { class: 'tl-when' }, h('time', { datetime: i.at, title: i.at }, stamp(i.at)),
        h('span', { class: 'muted small' }, ' +' + duration(Date.parse(i.at) - created))),
      h('span', { class: 'tl-what' }, i.what),
      i.error ? h('span', { class: 'tl-error' }, i.error) : null)));
}

// runningNow reports whether t is running a run its history does not hold
// yet (the history gets a run when it ends).
function runningNow(t) {
  return t.status === 'RUNNING' && !!t.started_at && !(t.history || []).some((e) => e.started_at === t.started_at);
}

// attempts is the table of executions, oldest first, the one running now
// last.
function attempts(t) {
  const hist = t.history || [];
  const running = runningNow(t);
  if (!hist.length && !running) return h('p', { class: 'muted' }, ACTIVE.includes(t.status) ? 'Not run yet.' : 'It never ran.');
  const row = (run, startedAt, took, worker, outcome, error, attrs) => h('tr', attrs || {},
    h('td', { dataset: { label: 'Run' } }, String(run)),
    h('td', { dataset: { label: 'Started' } }, h('time', { datetime: startedAt, title: startedAt }, stamp(startedAt))),
    h('td', { dataset: { label: 'Took' } }, took),
    h('td', { dataset: { label: 'Worker' }, class: 'mono small' }, worker || '–'),
    h('td', { dataset: { label: 'Outcome' } }, outcome ? outcomeBadge(outcome) : badge('RUNNING')),
    h('td', { dataset: { label: 'Error' } }, !error ? '–'
      : outcome === 'suspended' ? h('span', { class: 'muted' }, error) : h('pre', { class: 'error-text' }, error)));
  return h('div', { class: 'table-wrap' }, h('table', { class: 'rtable attempts' },
    h('thead', {}, h('tr', {}, ['Run', 'Started', 'Took', 'Worker', 'Outcome', 'Error'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {},
      hist.map((e) => row(e.run, e.started_at, duration(Date.parse(e.finished_at) - Date.parse(e.started_at)), e.worker, e.outcome, e.error)),
      running ? row(t.attempt || hist.length + 1, t.started_at, 'running now', t.worker, null, '', { class: 'attempt-running' }) : null)));
}

// suspension says what a suspended task waits for, and until when: the
// end of its sleep, or its wait's timeout.
function suspension(s) {
  const until = [h('time', { datetime: s.until, title: s.until }, stamp(s.until)), ' (', timeEl(s.until), ')'];
  return h('span', { id: 'task-suspended', class: 'suspension', dataset: { for: s.for } },
    s.for === 'sleep' ? 'Sleeping: step ' : s.for === 'signal' ? 'Waiting for signal ' : s.for + ' ',
    h('span', { class: 'mono' }, s.name), ' until ', ...until,
    s.for === 'signal' ? ', then it times out' : '');
}

// steps is the table of the task's durable steps, in the order they were
// recorded: name, what recorded it (its run, or for a wait a signal or the
// timeout), when, and the result.
function steps(t) {
  return h('div', { class: 'table-wrap' }, h('table', { class: 'rtable steps' },
    h('thead', {}, h('tr', {}, ['Step', 'Recorded by', 'Recorded', 'Result'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, t.steps.map((st) => h('tr', { dataset: { step: st.name, by: st.by || 'run' } },
      h('td', { dataset: { label: 'Step' }, class: 'mono' }, st.name),
      h('td', { dataset: { label: 'Recorded by' }, class: 'step-by' },
        st.by === 'signal' ? 'signal' : st.by === 'timeout' ? 'timeout (no signal in time)' : st.by || 'run ' + st.run),
      h('td', { dataset: { label: 'Recorded' } }, h('time', { datetime: st.at, title: st.at }, stamp(st.at))),
      h('td', { dataset: { label: 'Result' } }, view(JSON.stringify(st.result), 'Result of step ' + st.name)))))));
}

// orderLine is the card of t's order key: the key's task in flight and the
// first of those waiting behind it, in the order they will start, each
// linked, t marked; line is GET …/order-keys/{key}'s answer ({error} when
// it failed).
function orderLine(t, line) {
  const mark = (id) => h('span', {}, h('a', { class: 'mono', href: taskHref(id) }, id),
    id === t.id ? h('span', { class: 'badge b-queued order-this' }, 'this task') : null);
  let content;
  if (!line || line.error) {
    content = h('p', { class: 'state error' }, 'Could not read the key\'s line' + (line ? ': ' + line.error : '') + '.');
  } else {
    const next = line.next || [];
    const more = line.waiting - next.length;
    content = [
      h('dl', { class: 'facts' },
        h('dt', {}, 'In flight'), h('dd', { id: 'order-in-flight' }, line.in_flight ? mark(line.in_flight) : h('span', { class: 'muted' }, 'none')),
        h('dt', {}, 'Waiting'), h('dd', { id: 'order-waiting' }, String(line.waiting))),
      next.length ? h('ol', { class: 'order-next', id: 'order-next' }, next.map((id) => h('li', { dataset: { task: id } }, mark(id)))) : null,
      more > 0 ? h('p', { class: 'muted small' }, '… and ' + more + ' more.') : null,
    ];
  }
  return h('section', { class: 'card', 'aria-labelledby': 'order-h', id: 'order-line' },
    h('h2', { id: 'order-h' }, 'Order key ', h('span', { class: 'mono' }, t.order_key)),
    h('p', { class: 'muted small card-help' }, 'Of the tasks of this key in queue ' + t.queue +
      ', one at a time is in flight (queued, scheduled or running); the others wait, in submission order.'),
    content);
}
