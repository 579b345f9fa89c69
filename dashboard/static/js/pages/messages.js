// Messages: the reliable message queue (package queue) — the queues a
// message was put to, the topics of the one chosen (in the URL) with their
// queued, in-flight and delayed messages, and its newest dead letters;
// refreshed every 5 s.

import { h, replace, setText, routeHref } from '../dom.js';
import { plural } from '../fmt.js';

const DEAD = 20;

export function mount(main, ctx, route) {
  document.title = 'Messages · dtq';
  const { api } = ctx;
  let queue = route.params.queue || '';

  const qSel = h('select', { id: 'mq-queue', name: 'queue' });
  qSel.addEventListener('change', () => { location.hash = routeHref('messages', { queue: qSel.value }); });
  const status = h('p', { class: 'state', role: 'status' }, 'Loading message queues…');
  const topicBody = h('tbody');
  const topicTable = h('table', { class: 'rtable topics', hidden: true },
    h('caption', { class: 'sr-only' }, 'Topics'),
    h('thead', {}, h('tr', {}, ['Topic', 'Queued', 'In flight', 'Delayed'].map((c) => h('th', { scope: 'col' }, c)))),
    topicBody);
  const deadStatus = h('p', { class: 'state', role: 'status' });
  const deadBody = h('tbody');
  const deadTable = h('table', { class: 'rtable mq-dead', hidden: true },
    h('caption', { class: 'sr-only' }, 'Dead letters'),
    h('thead', {}, h('tr', {}, ['Topic', 'Message', 'Key', 'Deliveries', 'Reason', 'Data'].map((c) => h('th', { scope: 'col' }, c)))),
    deadBody);
  const picker = h('form', { class: 'filters', 'aria-label': 'Choose a message queue', hidden: true },
    h('label', { for: 'mq-queue' }, 'Queue', qSel));
  picker.addEventListener('submit', (e) => e.preventDefault());
  const topicsH = h('h2', { id: 'mq-topics-h' }, 'Topics');
  replace(main,
    h('div', { class: 'page-head' }, h('h1', {}, 'Messages'),
      h('p', { class: 'muted' }, 'The reliable message queue: topics of opaque messages, leased and settled by consumers (counts for the consumer group dtq).')),
    h('section', { class: 'card toolbar' }, picker, status),
    h('section', { class: 'card', 'aria-labelledby': 'mq-topics-h', id: 'mq-topics' }, topicsH, h('div', { class: 'table-wrap' }, topicTable)),
    h('section', { class: 'card', 'aria-labelledby': 'mq-dead-h', id: 'mq-dead' }, h('h2', { id: 'mq-dead-h' }, 'Dead letters'),
      h('p', { class: 'muted small card-help' }, 'The newest ' + DEAD + ' messages this queue gave up on (terminated, or past their deliveries).'),
      deadStatus, h('div', { class: 'table-wrap' }, deadTable)));

  let seen = '';
  const load = async () => {
    try {
      const qs = (await api.get('api/v1/mq')).queues || [];
      if (!queue && qs.length) queue = qs[0];
      if (!qs.length && !queue) {
        picker.hidden = true;
        status.hidden = false;
        setText(status, 'No message queues yet: a queue shows here once a message is put to it (POST /api/v1/mq/{queue}/topics/{topic}/messages, or queue.Queue.Put).');
        topicTable.hidden = deadTable.hidden = true;
        return;
      }
      const names = qs.includes(queue) ? qs : [queue, ...qs];
      if (qSel.options.length !== names.length || [...qSel.options].some((o, i) => o.value !== names[i])) {
        replace(qSel, names.map((n) => h('option', { value: n, selected: n === queue }, n)));
      }
      picker.hidden = false;
      status.hidden = true;
      const [topics, dead] = await Promise.all([
        api.get('api/v1/mq/' + api.seg(queue) + '/topics'),
        api.get('api/v1/mq/' + api.seg(queue) + '/dead', { limit: String(DEAD) }),
      ]);
      const key = JSON.stringify([queue, topics, dead]);
      if (key === seen) return; // unchanged: keep focus and selection
      seen = key;
      const ts = topics.topics || [];
      setText(topicsH, 'Topics of ' + queue + (ts.length ? ' (' + plural(ts.length, 'topic') + ')' : ''));
      replace(topicBody, ts.map((t) => h('tr', { dataset: { topic: t.topic } },
        h('td', { dataset: { label: 'Topic' }, class: 'mono' }, t.topic),
        h('td', { dataset: { label: 'Queued' } }, String(t.queued)),
        h('td', { dataset: { label: 'In flight' } }, String(t.in_flight)),
        h('td', { dataset: { label: 'Delayed' } }, String(t.delayed)))));
      topicTable.hidden = !ts.length;
      const ds = dead.dead || [];
      replace(deadBody, ds.map((d) => h('tr', { dataset: { dead: d.id } },
        h('td', { dataset: { label: 'Topic' }, class: 'mono' }, d.topic || '–'),
        h('td', { dataset: { label: 'Message' }, class: 'mono small' }, d.message_id || '–'),
        h('td', { dataset: { label: 'Key' }, class: 'mono small' }, d.key || '–'),
        h('td', { dataset: { label: 'Deliveries' } }, String(d.deliveries)),
        h('td', { dataset: { label: 'Reason' } }, h('span', { class: 'err-line', title: d.reason || '' }, d.reason || '')),
        h('td', { dataset: { label: 'Data' }, class: 'mono small' }, d.data !== undefined ? d.data : d.data_base64 ? 'base64: ' + d.data_base64 : ''))));
      deadTable.hidden = !ds.length;
      deadStatus.hidden = !!ds.length;
      setText(deadStatus, 'No dead letters in ' + queue + '.');
    } catch (e) {
      status.hidden = false;
      status.classList.add('error');
      setText(status, 'Could not load the message queues: ' + e.message);
    }
  };
  const poll = setInterval(load, 5000);
  load();
  return () => clearInterval(poll);
}
