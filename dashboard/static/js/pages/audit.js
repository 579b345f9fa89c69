// Audit: the admin actions (cancel, requeue, discard, pause, resume, …),
// newest first.

import { h, replace, setText, taskHref, workflowHref, routeHref } from '../dom.js';
import { timeEl } from '../fmt.js';

export function mount(main, ctx) {
  document.title = 'Audit · dtq';
  const { api } = ctx;
  const status = h('p', { class: 'state', role: 'status' }, 'Loading the audit log…');
  const tbody = h('tbody');
  const table = h('table', { class: 'rtable audit', hidden: true },
    h('caption', { class: 'sr-only' }, 'Audit log'),
    h('thead', {}, h('tr', {}, ['When', 'Action', 'Queue', 'Task', 'Detail'].map((c) => h('th', { scope: 'col' }, c)))),
    tbody);
  const reload = h('button', { type: 'button', class: 'btn btn-small' }, 'Refresh');
  replace(main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Audit log'),
      h('p', { class: 'muted' }, 'The latest 200 admin actions, newest first; refreshed every 5 s. ', reload)),
    h('section', { class: 'card' }, status, h('div', { class: 'table-wrap' }, table)));

  let lastID = null;
  const load = async () => {
    try {
      const res = await api.get('api/v1/audit', { limit: 200 });
      const es = res.entries || [];
      const top = es.length ? es[0].id : '';
      if (top !== lastID) {
        lastID = top;
        tbody.replaceChildren(...es.map((e) => h('tr', {},
          h('td', { dataset: { label: 'When' } }, timeEl(e.time)),
          h('td', { dataset: { label: 'Action' } }, h('span', { class: 'chip' }, e.action)),
          h('td', { dataset: { label: 'Queue' } }, e.queue ? h('a', { href: routeHref('tasks', { queue: e.queue }) }, e.queue) : '–'),
          h('td', { dataset: { label: 'Task' } }, subject(e)),
          h('td', { dataset: { label: 'Detail' } }, e.detail || ''))));
      }
      table.hidden = !es.length;
      status.hidden = !!es.length;
      status.classList.remove('error');
      if (!es.length) setText(status, 'No admin actions yet: cancels, requeues, discards, pauses and resumes are recorded here.');
    } catch (e) {
      status.hidden = false;
      status.classList.add('error');
      setText(status, 'Could not load the audit log: ' + e.message);
    }
  };
  reload.addEventListener('click', load);
  const poll = setInterval(load, 5000);
  load();
  return () => clearInterval(poll);
}

// WORKFLOW_ACTIONS are the actions whose task_id is a workflow's id.
const WORKFLOW_ACTIONS = ['workflow', 'cancel_workflow'];

// subject is what an entry acted on: a link to its task's page, or to its
// workflow's for a workflow's submission or cancellation.
function subject(e) {
  if (!e.task_id) return '–';
  if (WORKFLOW_ACTIONS.includes(e.action)) {
    return h('span', {}, h('span', { class: 'muted small' }, 'workflow '),
      h('a', { class: 'mono', href: workflowHref(e.task_id) }, e.task_id));
  }
  return h('a', { class: 'mono', href: taskHref(e.task_id) }, e.task_id);
}
