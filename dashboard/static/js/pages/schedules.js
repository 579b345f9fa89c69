// Schedules: the periodic tasks of every queue, with their next run, the
// last fired task and its status, pause / resume, Edit and New schedule;
// refreshed every 5 s.

import { h, replace, setText, taskHref, routeHref } from '../dom.js';
import { timeEl, badge, plural } from '../fmt.js';
import { openForm, num, json, FieldError } from '../form.js';

export function mount(main, ctx) {
  document.title = 'Schedules · dtq';
  const { api, act } = ctx;
  const status = h('p', { class: 'state', role: 'status' }, 'Loading schedules…');
  const tbody = h('tbody');
  const table = h('table', { class: 'rtable schedules', hidden: true },
    h('caption', { class: 'sr-only' }, 'Schedules'),
    h('thead', {}, h('tr', {}, ['Schedule', 'Cron', 'Task type', 'State', 'Next run', 'Last task', ''].map((c) => h('th', { scope: 'col' }, c)))),
    tbody);
  const summary = h('span', { class: 'muted' });
  const newBtn = h('button', { type: 'button', class: 'btn btn-primary', dataset: { need: 'admin' }, id: 'new-schedule' }, 'New schedule');
  newBtn.addEventListener('click', () => edit(null));
  replace(main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Schedules'),
      h('p', { class: 'muted' }, 'Periodic tasks: each tick of a schedule creates one task on its queue, fired by the queue\'s workers. ', summary)),
    h('section', { class: 'card' }, h('div', { class: 'card-actions' }, newBtn), status, h('div', { class: 'table-wrap' }, table)));

  // edit opens the schedule form: s prefilled, or a new schedule. Saving
  // replaces the whole schedule (PUT): a field left empty takes its
  // default.
  const edit = async (s) => {
    const res = await openForm({
      name: 'schedule',
      title: s ? 'Edit schedule ' + s.name : 'New schedule',
      intro: 'Each tick of the cron expression creates one task. Empty fields take their defaults.',
      submit: s ? 'Save' : 'Create',
      fields: [
        { name: 'queue', label: 'Queue', value: s ? s.queue : 'default', readonly: !!s, required: true },
        { name: 'name', label: 'Name', value: s ? s.name : '', readonly: !!s, required: true },
        { name: 'cron', label: 'Cron', value: s ? s.cron : '', placeholder: '*/5 * * * *', required: true,
          help: 'Five fields (minute hour day month weekday), six with seconds first, or @hourly, @every 10m…' },
        { name: 'time_zone', label: 'Time zone', value: s ? s.time_zone : '', placeholder: 'UTC' },
        { name: 'task_type', label: 'Task type', value: s ? s.task_type : '', required: true },
        { name: 'priority', label: 'Priority (0-9)', type: 'number', value: s ? String(s.priority) : '', placeholder: '5' },
        { name: 'payload', label: 'Payload (JSON)', type: 'textarea', value: s && s.payload !== null && s.payload !== undefined ? JSON.stringify(s.payload) : '',
          placeholder: '{"report": "daily"}' },
        { name: 'max_attempts', label: 'Max attempts', type: 'number', value: s ? String(s.max_attempts) : '', placeholder: '10' },
        { name: 'timeout_seconds', label: 'Timeout (seconds)', type: 'number', value: s ? String(s.timeout_seconds) : '', placeholder: '1800' },
        { name: 'missed', label: 'Missed ticks', type: 'select', value: s ? s.missed : 'skip',
          options: [['skip', 'skip them'], ['catch_up', 'catch up']] },
        { name: 'catch_up_max', label: 'Catch up at most', type: 'number', value: s && s.catch_up_max ? String(s.catch_up_max) : '' },
        { name: 'paused', label: 'Paused', type: 'checkbox', value: s ? s.paused : false },
      ],
      onSubmit: (v) => {
        if (!v.queue) throw new FieldError('queue', 'is required');
        if (!v.name) throw new FieldError('name', 'is required');
        const body = { cron: v.cron, task_type: v.task_type, time_zone: v.time_zone || undefined, payload: json(v, 'payload'),
          priority: num(v, 'priority'), max_attempts: num(v, 'max_attempts'), timeout_seconds: num(v, 'timeout_seconds'),
          missed: v.missed || undefined, catch_up_max: num(v, 'catch_up_max'), paused: v.paused || undefined };
        return api.putJSON('api/v1/schedules/' + api.seg(v.queue) + '/' + api.seg(v.name), body);
      },
    });
    if (res) {
      ctx.notify('ok', 'Schedule ' + res.name + (s ? ' is saved.' : ' is created.'));
      load();
    }
  };

  const rows = new Map(); // queue/name -> row
  const taskStatus = new Map(); // last task id -> status

  const row = (s) => {
    const key = s.queue + '/' + s.name;
    let r = rows.get(key);
    if (!r) {
      r = { state: h('span'), next: h('span'), last: h('span'), btn: h('button', { type: 'button', class: 'btn btn-small', dataset: { need: 'admin' } }),
        editBtn: h('button', { type: 'button', class: 'btn btn-small', dataset: { need: 'admin', edit: '' }, 'aria-label': 'Edit schedule ' + s.name }, 'Edit') };
      r.tr = h('tr', { dataset: { schedule: key } },
        h('td', { dataset: { label: 'Schedule' } }, h('strong', {}, s.name), h('div', { class: 'small muted' },
          'queue ', h('a', { href: routeHref('tasks', { queue: s.queue }) }, s.queue))),
        r.cron = h('td', { dataset: { label: 'Cron' } }),
        r.type = h('td', { dataset: { label: 'Task type' } }),
        h('td', { dataset: { label: 'State' } }, r.state),
        h('td', { dataset: { label: 'Next run' } }, r.next),
        h('td', { dataset: { label: 'Last task' } }, r.last),
        h('td', {}, h('div', { class: 'actions' }, r.btn, r.editBtn)));
      r.btn.addEventListener('click', () => toggle(r));
      r.editBtn.addEventListener('click', () => edit(r.s));
      rows.set(key, r);
    }
    r.s = s;
    replace(r.cron, h('code', {}, s.cron), h('div', { class: 'small muted' }, s.time_zone + (s.missed === 'catch_up' ? ' · catch up' : '')));
    setText(r.type, s.task_type);
    setText(r.state, s.paused ? 'paused' : 'active');
    r.state.className = 'badge ' + (s.paused ? 'b-paused' : 'b-active');
    replace(r.next, s.next_run ? timeEl(s.next_run) : h('span', { class: 'muted' }, '–'));
    if (s.last_task_id) {
      const st = taskStatus.get(s.last_task_id);
      replace(r.last, h('a', { class: 'mono small', href: taskHref(s.last_task_id) }, s.last_task_id), ' ',
        st ? badge(st) : null, h('div', { class: 'small muted' }, 'tick ', timeEl(s.last_tick)));
    } else {
      replace(r.last, h('span', { class: 'muted' }, 'none yet'));
    }
    setText(r.btn, s.paused ? 'Resume' : 'Pause');
    r.btn.setAttribute('aria-label', (s.paused ? 'Resume schedule ' : 'Pause schedule ') + s.name);
    r.btn.className = 'btn btn-small ' + (s.paused ? 'btn-primary' : '');
    return r;
  };

  const toggle = async (r) => {
    const s = r.s;
    const verb = s.paused ? 'resume' : 'pause';
    const res = await act(r.btn, () => api.post('api/v1/schedules/' + api.seg(s.queue) + '/' + api.seg(s.name) + '/' + verb),
      s.paused ? 'Schedule ' + s.name + ' resumed: it fires from its next tick.' : 'Schedule ' + s.name + ' paused: it fires nothing until resumed.');
    if (res) row(res);
  };

  // lastStatuses reads the status of each schedule's last task (a few
  // GETs: schedules are few); a task gone (expired) shows no badge.
  const lastStatuses = async (list) => {
    await Promise.all(list.filter((s) => s.last_task_id).map(async (s) => {
      try {
        const t = await api.get('api/v1/tasks/' + api.seg(s.last_task_id));
        taskStatus.set(s.last_task_id, t.status);
      } catch {
        taskStatus.delete(s.last_task_id);
      }
    }));
  };

  const load = async () => {
    try {
      const res = await api.get('api/v1/schedules');
      const list = res.schedules || [];
      await lastStatuses(list);
      const keep = new Set();
      list.forEach((s, i) => {
        const r = row(s);
        keep.add(s.queue + '/' + s.name);
        if (tbody.children[i] !== r.tr) tbody.insertBefore(r.tr, tbody.children[i] || null);
      });
      for (const [k, r] of rows) if (!keep.has(k)) { r.tr.remove(); rows.delete(k); }
      table.hidden = !list.length;
      status.hidden = !!list.length;
      status.classList.remove('error');
      const paused = list.filter((s) => s.paused).length;
      setText(summary, list.length ? plural(list.length, 'schedule') + (paused ? ', ' + paused + ' paused.' : '.') : '');
      if (!list.length) {
        replace(status, 'No schedules yet. Add one with New schedule, ', h('code', {}, 'dtq schedule add NAME --cron "*/5 * * * *" --type TYPE'),
          ', a PUT to /api/v1/schedules/{queue}/{name}, or dtq worker --schedules FILE.');
      }
    } catch (e) {
      status.hidden = false;
      status.classList.add('error');
      setText(status, 'Could not load the schedules: ' + e.message);
    }
  };
  const poll = setInterval(load, 5000);
  load();
  return () => clearInterval(poll);
}
