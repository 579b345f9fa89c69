// json.js: payloads and results as readable JSON. The text is parsed by a
// small parser that keeps numbers as written (JSON.parse would round
// 12345678901234567890) and keys in order, then indented into spans by
// token kind. Everything becomes text nodes: a string holding markup is
// shown as that string.

import { h } from './dom.js';

// LIMIT is the size above which JSON is shown as received, unindented.
const LIMIT = 256 * 1024;

// parse parses JSON text into nodes: {k:'o', e:[[key, node]…]},
// {k:'a', e:[node…]}, {k:'s', v}, {k:'n', v: literal}, {k:'l', v: 'true'|'false'|'null'}.
// It throws on malformed text.
export function parse(text) {
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\n\r'.includes(text[i])) i++; };
  const fail = () => { throw new SyntaxError('bad JSON at ' + i); };
  const str = () => {
    const start = i;
    i++; // "
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    if (i >= text.length) fail();
    i++;
    return JSON.parse(text.slice(start, i));
  };
  const value = (depth) => {
    if (depth > 64) fail();
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const e = [];
      ws();
      if (text[i] === '}') { i++; return { k: 'o', e }; }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        const key = str();
        ws();
        if (text[i++] !== ':') fail();
        e.push([key, value(depth + 1)]);
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] === '}') return { k: 'o', e };
        fail();
      }
    }
    if (c === '[') {
      i++;
      const e = [];
      ws();
      if (text[i] === ']') { i++; return { k: 'a', e }; }
      for (;;) {
        e.push(value(depth + 1));
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] === ']') return { k: 'a', e };
        fail();
      }
    }
    if (c === '"') return { k: 's', v: str() };
    const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!m) fail();
    i += m[0].length;
    return /^[tfn]/.test(m[0]) ? { k: 'l', v: m[0] } : { k: 'n', v: m[0] };
  };
  const v = value(0);
  ws();
  if (i !== text.length) fail();
  return v;
}

// field returns the node of key in the object node o (the last one, as
// JSON.parse does), or undefined.
export function field(o, key) {
  if (!o || o.k !== 'o') return undefined;
  let found;
  for (const [k, v] of o.e) if (k === key) found = v;
  return found;
}

// render returns a <pre> with the node indented and coloured by kind.
export function render(node, label) {
  const pre = h('pre', { class: 'json', tabindex: '0', 'aria-label': label });
  const out = [];
  const pad = (d) => '  '.repeat(d);
  const walk = (n, d) => {
    switch (n.k) {
      case 'o':
        if (!n.e.length) { out.push('{}'); return; }
        out.push('{\n');
        n.e.forEach(([k, v], j) => {
          out.push(pad(d + 1), h('span', { class: 'j-key' }, JSON.stringify(k)), ': ');
          walk(v, d + 1);
          out.push(j < n.e.length - 1 ? ',\n' : '\n');
        });
        out.push(pad(d) + '}');
        return;
      case 'a':
        if (!n.e.length) { out.push('[]'); return; }
        out.push('[\n');
        n.e.forEach((v, j) => {
          out.push(pad(d + 1));
          walk(v, d + 1);
          out.push(j < n.e.length - 1 ? ',\n' : '\n');
        });
        out.push(pad(d) + ']');
        return;
      case 's':
        out.push(h('span', { class: 'j-str' }, JSON.stringify(n.v)));
        return;
      case 'n':
        out.push(h('span', { class: 'j-num' }, n.v));
        return;
      default:
        out.push(h('span', { class: 'j-lit' }, n.v));
    }
  };
  walk(node, 0);
  // merge adjacent strings into single text nodes
  let buf = '';
  for (const part of out) {
    if (typeof part === 'string') { buf += part; continue; }
    if (buf) { pre.append(document.createTextNode(buf)); buf = ''; }
    pre.append(part);
  }
  if (buf) pre.append(document.createTextNode(buf));
  return pre;
}

// view shows raw JSON text: indented when it parses and is not huge, as
// received otherwise.
export function view(text, label) {
  if (text === undefined || text === null) return h('p', { class: 'muted' }, 'none');
  if (text.length <= LIMIT) {
    try {
      return render(parse(text), label);
    } catch {
      // shown as received below
    }
  }
  return h('pre', { class: 'json', tabindex: '0', 'aria-label': label }, text);
}

// rawField returns the raw JSON text of key in the JSON object text, or
// undefined when absent (for a task's payload and result, losslessly).
export function rawField(text, key) {
  let node;
  try {
    node = field(parse(text), key);
  } catch {
    return undefined;
  }
  if (node === undefined) return undefined;
  return serialize(node);
}

// serialize writes a node back as compact JSON text.
export function serialize(n) {
  switch (n.k) {
    case 'o': return '{' + n.e.map(([k, v]) => JSON.stringify(k) + ':' + serialize(v)).join(',') + '}';
    case 'a': return '[' + n.e.map(serialize).join(',') + ']';
    case 's': return JSON.stringify(n.v);
    default: return n.v;
  }
}
