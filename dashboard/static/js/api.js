// api.js: the HTTP API of the server that serves this page, its API key and
// the key's role.
//
// The key lives in sessionStorage only (this tab, until it closes). Nothing
// asks for it up front: a request answered 401 asks the user once (through
// the prompt set with setKeyPrompt), then retries with the key. A key the
// server refuses is forgotten and the user is asked again. Once a key is set,
// GET /api/v1/whoami tells its role; can(need) says whether it allows an
// action, and <html data-role> lets the stylesheet hide the actions pages
// mark with data-need that the role may not take.

const KEY = 'dtq.apiKey';

// base is the directory of the page, so the dashboard also works behind a
// proxy that serves it under a path prefix.
const base = new URL('.', document.baseURI);

// ApiError is a failed request: status 0 when the server was not reached.
// detail is the API's own message (for a 400, it starts with the field it
// names), without the status the message ends with.
export class ApiError extends Error {
  constructor(status, code, message, detail) {
    super(message);
    this.status = status;
    this.code = code;
    this.detail = detail || '';
  }
}

let prompt = async () => null;
let pendingPrompt = null;
let readsNeedKey = false;

// setKeyPrompt sets the function that asks the user for the key:
// prompt(reason) resolves to the key, or null when the user declines.
// reason is 'admin', 'read' or 'refused' (the key given was wrong).
export function setKeyPrompt(fn) {
  prompt = fn;
}

export function getKey() {
  try {
    return sessionStorage.getItem(KEY) || '';
  } catch {
    return '';
  }
}

// setKey keeps the key k ('' forgets it) and learns its role: it resolves
// to false when the server does not know k (which is then forgotten), else
// true.
export function setKey(k) {
  try {
    if (k) sessionStorage.setItem(KEY, k);
    else sessionStorage.removeItem(KEY);
  } catch {
    // storage disabled: the key is not kept
  }
  memoryKey = k;
  const known = learnRole(k);
  for (const fn of keyListeners) fn(!!k);
  return known;
}

// ---- the key's role ------------------------------------------------------

// role is the role of the key set, from GET /api/v1/whoami: 'read',
// 'submit', 'worker' or 'admin'; '' while unknown or without a key (every
// action is shown: one the server refuses asks for a key).
let role = '';
let memoryKey = '';
const roleListeners = new Set();

function setRole(r) {
  role = r === 'read' || r === 'submit' || r === 'worker' || r === 'admin' ? r : '';
  const limited = role && role !== 'admin';
  if (limited) document.documentElement.dataset.role = role;
  else delete document.documentElement.dataset.role;
  for (const fn of roleListeners) fn(role);
}

// getRole returns the role of the key set ('' while unknown or none).
export function getRole() {
  return role;
}

// onRoleChange calls fn(role) whenever the key's role is learned or lost.
export function onRoleChange(fn) {
  roleListeners.add(fn);
  return () => roleListeners.delete(fn);
}

// can reports whether the key set may take an action that needs role need
// ('read', 'submit', 'worker' or 'admin'), as the server decides it: an
// admin key may do everything, every key may read, others their own role's
// actions. Without a key or before its role is known: true.
export function can(need) {
  return !role || role === 'admin' || need === 'read' || role === need;
}

// learnRole asks the server the role of key k (none: forgets the role). A
// key the server does not know (401) is forgotten: it resolves to false
// then, else to true.
async function learnRole(k) {
  setRole('');
  if (!k) return true;
  let res;
  try {
    res = await fetch(url('api/v1/whoami'), {
      headers: { Accept: 'application/json', 'X-API-Key': k }, cache: 'no-store', credentials: 'same-origin',
    });
  } catch {
    return true; // unreachable: every action stays shown; the server still decides
  }
  if (k !== memoryKey) return true; // another key was set meanwhile
  if (res.status === 401) {
    setKey('');
    return false;
  }
  if (!res.ok) return true;
  try {
    setRole((await res.json()).role);
  } catch {
    // not the API's answer: the role stays unknown
  }
  return true;
}

// learnStoredRole learns the role of the key this tab kept, if any: call
// it once at start.
export function learnStoredRole() {
  memoryKey = getKey();
  learnRole(memoryKey);
}

const keyListeners = new Set();
// onKeyChange calls fn(hasKey) whenever the key is set or forgotten.
export function onKeyChange(fn) {
  keyListeners.add(fn);
  return () => keyListeners.delete(fn);
}

// readsNeedAKey reports whether a read was answered 401 (the server runs
// with --api-key-reads): then the events WebSocket needs ?api_key= too.
export function readsNeedAKey() {
  return readsNeedKey;
}

// url resolves an API path ("api/v1/tasks") with query parameters (empty
// ones are left out).
export function url(path, params) {
  const u = new URL(path, base);
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== '') u.searchParams.set(k, v);
  }
  return u;
}

// wsURL is the URL of the events WebSocket, with the key when reads need it.
export function wsURL() {
  const u = url('ws/events');
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  const k = getKey();
  if (readsNeedKey && k) u.searchParams.set('api_key', k);
  return u.toString();
}

function askOnce(reason) {
  if (!pendingPrompt) {
    pendingPrompt = Promise.resolve(prompt(reason)).finally(() => { pendingPrompt = null; });
  }
  return pendingPrompt;
}

const UNAUTHORIZED = {
  admin: 'Unauthorized (401): this server requires an API key for admin actions. Nothing was changed; use the “API key” button to enter it.',
  read: 'Unauthorized (401): this server requires an API key to read. Use the “API key” button to enter it.',
  refused: 'Unauthorized (401): the server refused the API key. Nothing was changed; enter the right key with the “API key” button.',
};

// request sends one API request and returns the decoded JSON answer. With
// raw, it returns {data, text} (the text for lossless JSON of payloads).
async function request(method, path, { params, raw, body } = {}) {
  const isRead = method === 'GET';
  for (let round = 0; ; round++) {
    const headers = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const k = getKey();
    if (k) headers['X-API-Key'] = k;
    let res;
    try {
      res = await fetch(url(path, params), {
        method, headers, cache: 'no-store', credentials: 'same-origin',
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (e) {
      throw new ApiError(0, 'unreachable', 'The server did not answer (' + e.message + ').');
    }
    const text = await res.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (res.status === 401) {
      if (isRead) readsNeedKey = true;
      const refused = !!k;
      if (refused) setKey('');
      const reason = refused ? 'refused' : isRead ? 'read' : 'admin';
      if (round < 3) {
        const given = await askOnce(reason);
        if (given) {
          setKey(given);
          continue;
        }
      }
      throw new ApiError(401, 'unauthorized', UNAUTHORIZED[reason]);
    }
    if (!res.ok) {
      const e = data && data.error;
      const msg = e && e.message ? e.message : text.slice(0, 200) || res.statusText;
      throw new ApiError(res.status, (e && e.code) || 'http_' + res.status, msg + ' (' + res.status + (e && e.code ? ' ' + e.code : '') + ')',
        e && e.message);
    }
    return raw ? { data, text } : data;
  }
}

// get reads an API route.
export function get(path, params, opts) {
  return request('GET', path, { params, ...opts });
}

// post and del change state. The browser sends them same-origin (the API's
// cross-origin protection lets them through), with the key when one is set.
export function post(path, params) {
  return request('POST', path, { params });
}

// postJSON changes state with a JSON body.
export function postJSON(path, body) {
  return request('POST', path, { body });
}

// putJSON creates or replaces a thing with a JSON body.
export function putJSON(path, body) {
  return request('PUT', path, { body });
}

export function del(path, params) {
  return request('DELETE', path, { params });
}

// seg encodes one path segment (a task id or queue name).
export function seg(s) {
  return encodeURIComponent(s);
}
