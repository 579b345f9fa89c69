// chart.js: a small SVG line chart for the live per-second series. Colours
// come from CSS classes (s-<key>), so it follows light and dark mode.

import { h, replace, setText } from './dom.js';

const W_DEFAULT = 560, H = 170, M = { l: 48, r: 10, t: 10, b: 22 };

// TICKS is how many grid intervals the y axis has.
const TICKS = 4;

// niceStep rounds a tick interval up to 1, 2 or 5 times a power of ten, so
// the axis labels are round numbers.
function niceStep(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (v <= m * p + 1e-9) return m * p;
  return 10 * p;
}

// LineChart draws series over time. points: [{t (unix s), <key>: number|null}].
export class LineChart {
  // opts: {title, series: [{key, name}], format(v) -> string, min (the
  // least maximum of the y axis), and for points that are not seconds up
  // to now: ticks(points) -> [{i, label}] (the x axis's labels) and
  // when(t) -> string (the hover's time)}
  constructor(opts) {
    this.opts = opts;
    this.points = [];
    this.hover = null;
    this.svg = h('svg:svg', { class: 'chart-svg', role: 'img', 'aria-label': opts.title, height: H });
    this.tip = h('div', { class: 'chart-tip', hidden: true, 'aria-hidden': 'true' });
    this.values = new Map();
    this.items = new Map();
    const legend = h('ul', { class: 'legend' }, opts.series.map((s) => {
      const v = h('span', { class: 'legend-value' }, '–');
      this.values.set(s.key, v);
      const li = h('li', { dataset: { series: s.key, peak: '' } }, h('span', { class: 'swatch s-' + s.key, 'aria-hidden': 'true' }), s.name + ' ', v);
      this.items.set(s.key, li);
      return li;
    }));
    this.plot = h('div', { class: 'chart-plot' }, this.svg, this.tip);
    this.el = h('div', { class: 'chart' }, legend, this.plot);
    this.svg.addEventListener('pointermove', (ev) => this.onHover(ev));
    this.svg.addEventListener('pointerleave', () => { this.hover = null; this.draw(); });
    this.resize = new ResizeObserver(() => this.draw());
    this.resize.observe(this.plot);
  }

  destroy() {
    this.resize.disconnect();
  }

  update(points) {
    this.points = points;
    const last = points[points.length - 1] || {};
    for (const s of this.opts.series) {
      // the latest second with a value (latency has gaps)
      let v = null;
      for (let i = points.length - 1; i >= 0 && i >= points.length - 10; i--) {
        if (points[i][s.key] !== null && points[i][s.key] !== undefined) { v = points[i][s.key]; break; }
      }
      setText(this.values.get(s.key), v === null ? (last[s.key] === null ? '–' : this.opts.format(0)) : this.opts.format(v));
      // the peak of the window, for the title and for tests
      let peak = null;
      for (const p of points) if (p[s.key] !== null && p[s.key] !== undefined && (peak === null || p[s.key] > peak)) peak = p[s.key];
      const li = this.items.get(s.key);
      li.dataset.peak = peak === null ? '' : String(peak);
      li.title = peak === null ? 'no data yet' : 'peak over the window: ' + this.opts.format(peak);
    }
    this.draw();
  }

  onHover(ev) {
    const r = this.svg.getBoundingClientRect();
    const n = this.points.length;
    if (n < 2) return;
    const w = r.width - M.l - M.r;
    const i = Math.round(((ev.clientX - r.left - M.l) / w) * (n - 1));
    this.hover = i >= 0 && i < n ? i : null;
    this.draw();
  }

  draw() {
    const width = Math.max(200, Math.floor(this.plot.clientWidth || W_DEFAULT));
    const pts = this.points;
    const n = pts.length;
    const svg = this.svg;
    svg.setAttribute('width', width);
    svg.setAttribute('viewBox', `0 0 ${width} ${H}`);
    let max = 0;
    for (const p of pts) for (const s of this.opts.series) if (p[s.key] > max) max = p[s.key];
    const ymax = niceStep(Math.max(max, this.opts.min || 1) / TICKS) * TICKS;
    const x = (i) => M.l + (n <= 1 ? 0 : (i / (n - 1)) * (width - M.l - M.r));
    const y = (v) => M.t + (1 - v / ymax) * (H - M.t - M.b);
    const parts = [];
    for (let k = 0; k <= TICKS; k++) {
      const v = (ymax / TICKS) * k;
      parts.push(h('svg:line', { class: 'grid', x1: M.l, x2: width - M.r, y1: y(v), y2: y(v) }));
      parts.push(h('svg:text', { class: 'axis', x: M.l - 6, y: y(v) + 4, 'text-anchor': 'end' }, this.opts.format(v)));
    }
    if (n > 1 && this.opts.ticks) {
      for (const tk of this.opts.ticks(pts)) {
        if (tk.i < 0 || tk.i >= n) continue;
        const anchor = tk.i === 0 ? 'start' : tk.i === n - 1 ? 'end' : 'middle';
        parts.push(h('svg:text', { class: 'axis', x: x(tk.i), y: H - 6, 'text-anchor': anchor }, tk.label));
      }
    } else if (n > 1) {
      const now = pts[n - 1].t + 1;
      // a label per minute, or per 2 minutes on a narrow chart; none so
      // close to "now" that they would overlap
      const every = width - M.l - M.r < 420 ? 120 : 60;
      for (let i = 0; i < n; i++) {
        const ago = now - pts[i].t;
        if (ago % every === 0 && x(i) < width - M.r - 50) {
          parts.push(h('svg:text', { class: 'axis', x: x(i), y: H - 6, 'text-anchor': i === 0 ? 'start' : 'middle' }, '-' + ago / 60 + ' min'));
        }
      }
      parts.push(h('svg:text', { class: 'axis', x: width - M.r, y: H - 6, 'text-anchor': 'end' }, 'now'));
    }
    for (const s of this.opts.series) {
      let d = '', pen = false;
      for (let i = 0; i < n; i++) {
        const v = pts[i][s.key];
        if (v === null || v === undefined) { pen = false; continue; }
        d += (pen ? 'L' : 'M') + x(i).toFixed(1) + ' ' + y(v).toFixed(1);
        pen = true;
      }
      if (d) parts.push(h('svg:path', { class: 'line s-' + s.key, d }));
      // lone values (latency seconds between gaps) get a dot
      for (let i = 0; i < n; i++) {
        const v = pts[i][s.key];
        if (!(v > 0)) continue;
        const prev = i > 0 ? pts[i - 1][s.key] : null, next = i < n - 1 ? pts[i + 1][s.key] : null;
        if ((prev === null || prev === undefined) && (next === null || next === undefined)) {
          parts.push(h('svg:circle', { class: 'dot s-' + s.key, cx: x(i), cy: y(v), r: 2 }));
        }
      }
    }
    if (this.hover !== null && this.hover < n) {
      const i = this.hover, p = pts[i];
      parts.push(h('svg:line', { class: 'cursor', x1: x(i), x2: x(i), y1: M.t, y2: H - M.b }));
      const when = this.opts.when ? this.opts.when(p.t) : new Date(p.t * 1000).toLocaleTimeString();
      replace(this.tip, h('strong', {}, when), this.opts.series.map((s) =>
        h('div', {}, h('span', { class: 'swatch s-' + s.key }), s.name + ': ' + (p[s.key] === null || p[s.key] === undefined ? '–' : this.opts.format(p[s.key])))));
      this.tip.hidden = false;
      const left = x(i) > width / 2 ? x(i) - 170 : x(i) + 12;
      this.tip.style.left = Math.max(0, left) + 'px';
    } else {
      this.tip.hidden = true;
    }
    replace(svg, parts);
  }
}
