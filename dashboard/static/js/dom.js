// dom.js: building elements. Every string goes in as a text node or an
// attribute value: nothing here parses HTML, so task data (payloads, types,
// errors, queue names) can never become markup.

// h builds an element: h('a', {href: '#/x', class: 'c'}, 'text', child, …).
// attrs keys: class, dataset (object), on (object of event listeners),
// hidden/disabled/checked/selected/value (properties), anything else is set
// with setAttribute. Children: strings and numbers become text nodes; null,
// undefined and false are skipped; arrays are flattened.
export function h(tag, attrs, ...children) {
  const el = tag.startsWith('svg:')
    ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'on') {
      for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    } else if (k === 'dataset') {
      Object.assign(el.dataset, v);
    } else if (k === 'class' && !(el instanceof SVGElement)) {
      el.className = v;
    } else if (['hidden', 'disabled', 'checked', 'selected', 'value'].includes(k)) {
      el[k] = v;
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

// append adds children (as h takes them) to el.
export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// clear removes every child of el and appends children.
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// setText sets el's text when it changed (keeps selection and avoids
// needless layout).
export function setText(el, text) {
  const s = String(text);
  if (el.textContent !== s) el.textContent = s;
}

// taskHref is the dashboard link of a task. The id is URI-encoded: a link
// built from data can never be a javascript: URL, it is always "#/tasks/…".
export function taskHref(id) {
  return '#/tasks/' + encodeURIComponent(id);
}

// workflowHref is the dashboard link of a workflow, encoded as taskHref's.
export function workflowHref(id) {
  return '#/workflows/' + encodeURIComponent(id);
}

// routeHref builds "#/page?k=v" from a page and its parameters, skipping
// empty ones.
export function routeHref(page, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v) q.set(k, v);
  const s = q.toString();
  return '#/' + page + (s ? '?' + s : '');
}

// throttle returns fn wrapped so that it runs at most once per ms: a call
// during the wait schedules one trailing run.
export function throttle(fn, ms) {
  let timer = null, pending = false, last = 0;
  const run = () => {
    timer = null;
    if (!pending) return;
    pending = false;
    last = Date.now();
    fn();
  };
  const wrapped = () => {
    pending = true;
    if (timer) return;
    const wait = Math.max(0, last + ms - Date.now());
    timer = setTimeout(run, wait);
  };
  wrapped.cancel = () => { clearTimeout(timer); timer = null; pending = false; };
  return wrapped;
}
