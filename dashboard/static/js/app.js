// app.js: the dashboard's shell: navigation between pages (by the URL's
// hash, so every view is a link), the live connection, notices, the API key
// dialog and the confirmation dialog.

import * as api from './api.js';
import { EventStream, Rates } from './events.js';
import { h } from './dom.js';
import { refreshTimes } from './fmt.js';
import * as overview from './pages/overview.js';
import * as tasks from './pages/tasks.js';
import * as task from './pages/task.js';
import * as workflow from './pages/workflow.js';
import * as workflows from './pages/workflows.js';
import * as messages from './pages/messages.js';
import * as dlq from './pages/dlq.js';
import * as workers from './pages/workers.js';
import * as schedules from './pages/schedules.js';
import * as limits from './pages/limits.js';
import * as audit from './pages/audit.js';
import * as history from './pages/history.js';

const $ = (id) => document.getElementById(id);
const main = $('main');

// ---- notices ---------------------------------------------------------

// notify shows a message: kind 'ok' (fades after 5 s) or 'error' (stays
// 30 s, or until dismissed).
function notify(kind, text) {
  const box = $('notices');
  const n = h('div', { class: 'notice notice-' + kind, role: kind === 'error' ? 'alert' : 'status' },
    h('span', { class: 'notice-text' }, text),
    h('button', { type: 'button', class: 'notice-close', 'aria-label': 'Dismiss', on: { click: () => n.remove() } }, '×'));
  box.append(n);
  while (box.children.length > 4) box.firstElementChild.remove();
  setTimeout(() => n.remove(), kind === 'error' ? 30000 : 5000);
  return n;
}

// ---- dialogs -----------------------------------------------------------

const REASONS = {
  admin: 'The server answered 401 Unauthorized: admin actions need its API key. Enter it to go on.',
  read: 'The server answered 401 Unauthorized: reading needs its API key here (--api-key-reads).',
  refused: 'The server refused that key (401 Unauthorized). Enter the right key.',
};

// keyDialog opens the API key dialog. With a reason (a request answered
// 401) it resolves to the key typed, or null; the caller stores it. Without
// one (the header button) it stores or forgets the key itself.
function keyDialog(reason) {
  return new Promise((resolve) => {
    const dlg = $('key-dialog'), input = $('key-input');
    const reasonEl = $('key-reason');
    reasonEl.textContent = reason ? REASONS[reason] : '';
    reasonEl.hidden = !reason;
    $('key-state').textContent = api.getKey()
      ? 'A key is set for this tab' + (api.getRole() ? ': its role is ' + api.getRole() + '.' : '.')
      : 'No key is set. It is needed only when the server runs with --api-key or --api-keys.';
    $('key-forget').hidden = !api.getKey();
    input.value = '';
    let result = null;
    const done = (v) => { result = v; dlg.close(); };
    $('key-form').onsubmit = (e) => { e.preventDefault(); done(input.value.trim() || null); };
    $('key-cancel').onclick = () => done(null);
    $('key-forget').onclick = () => {
      api.setKey('');
      notify('ok', 'The API key was forgotten.');
      done(null);
    };
    dlg.onclose = () => {
      if (dlg.open) return; // a late close event of an earlier opening
      if (!reason && result) {
        api.setKey(result).then((known) => {
          if (known) notify('ok', 'The API key is set for this tab.');
          else notify('error', 'The server does not know that API key (401): it was not kept. Enter the right key with the “API key” button.');
        });
      }
      if (api.readsNeedAKey()) stream.reconnectNow();
      resolve(result);
    };
    dlg.showModal();
    input.focus();
  });
}

// confirm asks before a bulk or destructive action; resolves to true or
// false.
function confirm({ title, text, ok, danger }) {
  return new Promise((resolve) => {
    const dlg = $('confirm-dialog');
    $('confirm-title').textContent = title;
    $('confirm-text').textContent = text;
    const okBtn = $('confirm-ok');
    okBtn.textContent = ok || 'Confirm';
    okBtn.className = 'btn ' + (danger ? 'btn-danger' : 'btn-primary');
    let yes = false;
    $('confirm-form').onsubmit = (e) => { e.preventDefault(); yes = true; dlg.close(); };
    $('confirm-cancel').onclick = () => dlg.close();
    // The close event comes after the dialog closed, as a task of its own:
    // if the dialog was opened again meanwhile, the event is not this
    // question's answer.
    dlg.onclose = () => { if (!dlg.open) resolve(yes); };
    dlg.showModal();
    $('confirm-cancel').focus();
  });
}

api.setKeyPrompt(keyDialog);

// showKeyState labels the key button: set or not, and the role of a key
// that may not do everything (its actions the others are hidden).
function showKeyState() {
  const b = $('key-button');
  const has = !!api.getKey();
  const role = api.getRole();
  const limited = has && role && role !== 'admin' ? ' (' + role + ')' : '';
  b.textContent = (has ? 'API key ✓' : 'API key') + limited;
  b.setAttribute('aria-label', has ? 'API key (set for this tab' + (role ? ', role ' + role : '') + ')' : 'API key (not set)');
}
api.onKeyChange(showKeyState);
api.onRoleChange(showKeyState);
api.learnStoredRole();
showKeyState();
$('key-button').addEventListener('click', () => keyDialog(null));

// ---- live connection ---------------------------------------------------

const stream = new EventStream();
const rates = new Rates(stream);

function showConnection() {
  const c = $('conn'), banner = $('banner');
  const st = stream.state;
  c.className = 'conn conn-' + st;
  c.textContent = st === 'live' ? 'live' : st === 'down' ? 'offline' : 'connecting…';
  if (st === 'down') {
    const s = Math.max(0, Math.ceil((stream.retryAt - Date.now()) / 1000));
    banner.textContent = 'Live updates are disconnected: reconnecting in ' + s + ' s. Pages still refresh every few seconds.';
    banner.hidden = false;
  } else if (st === 'connecting' && !banner.hidden) {
    banner.textContent = 'Reconnecting to live updates…';
  } else if (st === 'live') {
    banner.hidden = true;
  }
}
stream.onState(showConnection);

// ---- actions -------------------------------------------------------------

// act runs an admin action from a button: the button is disabled meanwhile,
// success shows okText (a string or a function of the answer), failure its
// message. It resolves to the answer, or undefined on failure.
async function act(button, fn, okText) {
  if (button) button.disabled = true;
  try {
    const res = await fn();
    if (okText) notify('ok', typeof okText === 'function' ? okText(res) : okText);
    return res;
  } catch (e) {
    notify('error', e.message);
    return undefined;
  } finally {
    if (button && button.isConnected) button.disabled = false;
  }
}

const ctx = { api, stream, rates, notify, confirm, act };

// ---- pages ---------------------------------------------------------------

const PAGES = { overview, tasks, task, workflow, workflows, messages, dlq, schedules, limits, workers, audit, history };

// route parses location.hash: "#/", "#/tasks?queue=…", "#/tasks/<id>",
// "#/workflows?queue=…&status=…", "#/workflows/<id>", "#/messages?queue=…", "#/dlq?queue=…", "#/schedules", "#/limits", "#/workers", "#/audit", "#/history?queue=…&type=…&last=…". Other hashes (a skip link) are
// not routes: null.
function route() {
  const raw = location.hash.replace(/^#/, '') || '/';
  if (!raw.startsWith('/')) return null;
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const params = Object.fromEntries(new URLSearchParams(q < 0 ? '' : raw.slice(q + 1)));
  let parts;
  try {
    parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    parts = ['?'];
  }
  if (parts.length === 0) return { page: 'overview', params };
  if (parts[0] === 'tasks' && parts.length > 1) return { page: 'task', id: parts.slice(1).join('/'), params };
  if (parts[0] === 'workflows' && parts.length > 1) return { page: 'workflow', id: parts.slice(1).join('/'), params };
  if (PAGES[parts[0]] && parts[0] !== 'task' && parts[0] !== 'workflow') return { page: parts[0], params };
  return { page: 'missing', params };
}

let cleanup = null;
let first = true;

function render() {
  const r = route();
  if (!r) return;
  if (cleanup) cleanup();
  cleanup = null;
  main.replaceChildren();
  const nav = r.page === 'task' ? 'tasks' : r.page === 'workflow' ? 'workflows' : r.page;
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (r.page === 'missing') {
    document.title = 'Not found · dtq';
    main.append(h('h1', {}, 'No such page'), h('p', {}, h('a', { href: '#/' }, 'Back to the overview')));
  } else {
    cleanup = PAGES[r.page].mount(main, ctx, r) || null;
  }
  if (!first) main.focus({ preventScroll: true });
  first = false;
  window.scrollTo(0, 0);
}

window.addEventListener('hashchange', render);
$('skip').addEventListener('click', (e) => {
  e.preventDefault();
  main.focus();
});
setInterval(() => {
  refreshTimes(main);
  if (stream.state === 'down') showConnection();
}, 1000);

render();
stream.start();
