// fmt.js: numbers, times and durations for people.

import { h } from './dom.js';

const nf = new Intl.NumberFormat();

// num formats a count: 12,345.
export function num(n) {
  return n === null || n === undefined ? '–' : nf.format(n);
}

// rate formats a per-second value with one decimal below 10.
export function rate(v) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  return v < 10 && v % 1 !== 0 ? v.toFixed(1) : nf.format(Math.round(v));
}

// duration formats milliseconds: 850 ms, 1.2 s, 3 min 4 s, 30 min, 2 h 5 min.
export function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '–';
  const neg = ms < 0;
  ms = Math.abs(ms);
  const two = (big, bigUnit, small, smallUnit) => big + ' ' + bigUnit + (small ? ' ' + small + ' ' + smallUnit : '');
  let s;
  if (ms < 1000) s = Math.round(ms) + ' ms';
  else if (ms < 10_000) s = (ms / 1000).toFixed(1).replace(/\.0$/, '') + ' s';
  else if (ms < 60_000) s = Math.round(ms / 1000) + ' s';
  else if (ms < 3_600_000) s = two(Math.floor(ms / 60_000), 'min', Math.round((ms % 60_000) / 1000), 's');
  else if (ms < 86_400_000) s = two(Math.floor(ms / 3_600_000), 'h', Math.round((ms % 3_600_000) / 60_000), 'min');
  else s = two(Math.floor(ms / 86_400_000), 'd', Math.round((ms % 86_400_000) / 3_600_000), 'h');
  return (neg ? '-' : '') + s;
}

// plural writes "1 worker", "2 workers" (the plural is word + "s" unless
// given).
export function plural(n, word, many) {
  return num(n) + ' ' + (n === 1 ? word : many || word + 's');
}

// ago formats a time relative to now: "3 s ago", "in 5 min".
export function ago(iso) {
  if (!iso) return '–';
  const d = Date.now() - Date.parse(iso);
  if (Number.isNaN(d)) return String(iso);
  const a = Math.abs(d);
  if (a < 1000) return 'now';
  let s;
  if (a < 60_000) s = Math.floor(a / 1000) + ' s';
  else if (a < 3_600_000) s = Math.floor(a / 60_000) + ' min';
  else if (a < 86_400_000) s = Math.floor(a / 3_600_000) + ' h';
  else s = Math.floor(a / 86_400_000) + ' d';
  return d > 0 ? s + ' ago' : 'in ' + s;
}

// stamp formats a time in the browser's zone: 2026-11-29 18:13:37.
export function stamp(iso) {
  if (!iso) return '–';
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return String(iso);
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${t.getFullYear()}-${p(t.getMonth() + 1)}-${p(t.getDate())} ${p(t.getHours())}:${p(t.getMinutes())}:${p(t.getSeconds())}`;
}

// timeEl is a <time> showing a relative time, the exact one as its title.
export function timeEl(iso) {
  if (!iso) return h('span', { class: 'muted' }, '–');
  return h('time', { datetime: iso, title: stamp(iso) + ' (' + iso + ')', class: 'rel', dataset: { rel: '1' } }, ago(iso));
}

// refreshTimes updates the relative times under root (called every second).
export function refreshTimes(root) {
  for (const t of root.querySelectorAll('time[data-rel]')) {
    const s = ago(t.getAttribute('datetime'));
    if (t.textContent !== s) t.textContent = s;
  }
}

// STATUSES are the task statuses, in life order.
export const STATUSES = ['QUEUED', 'SCHEDULED', 'RUNNING', 'SUCCEEDED', 'DEAD', 'CANCELLED'];

// badge is a status badge; an unknown status is shown as it is.
export function badge(status) {
  const s = String(status || '');
  const cls = STATUSES.includes(s) ? s.toLowerCase() : 'unknown';
  return h('span', { class: 'badge b-' + cls }, s || '?');
}

// WF_COLOURS maps the statuses of a workflow and of its nodes to the task
// status colours: running and active as RUNNING, pending as QUEUED, failed
// as DEAD; skipped has a class of its own.
const WF_COLOURS = {
  RUNNING: 'running', ACTIVE: 'running', PENDING: 'queued', SUCCEEDED: 'succeeded',
  FAILED: 'dead', CANCELLED: 'cancelled', SKIPPED: 'skipped',
};

// wfColour is the colour class suffix of a workflow's or node's status
// ('unknown' for a status it does not know).
export function wfColour(status) {
  return WF_COLOURS[status] || 'unknown';
}

// wfBadge is the badge of a workflow's or a node's status.
export function wfBadge(status) {
  const s = String(status || '');
  return h('span', { class: 'badge b-' + wfColour(s) }, s || '?');
}

// outcomeColour is the colour class of an execution's outcome (succeeded,
// retried, dead, cancelled, lost, suspended), '' for another.
export function outcomeColour(outcome) {
  return { succeeded: 'succeeded', retried: 'scheduled', dead: 'dead', cancelled: 'cancelled', lost: 'dead', suspended: 'scheduled' }[outcome] || '';
}

// outcomeBadge is the badge of an execution's outcome.
export function outcomeBadge(outcome) {
  return h('span', { class: 'badge b-' + (outcomeColour(outcome) || 'unknown') }, outcome || '?');
}
