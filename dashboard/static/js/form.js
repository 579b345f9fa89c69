// form.js: the dialogs that create and edit things (limits, schedules,
// group weights). The server validates: its 400 answer names the field
// first ("cron … expected 5 to 6 fields"), and the message is shown under
// that field; a message that names no field of the form shows above the
// buttons. Nothing is checked here that the server would answer
// differently, except what the browser must build: JSON and numbers.

import { h, setText } from './dom.js';

// FieldError is a problem found before sending, named like the API's.
export class FieldError extends Error {
  constructor(field, message) {
    super(field + ' ' + message);
    this.field = field;
  }
}

let seq = 0;

// openForm shows a modal form and resolves to the answer of onSubmit once
// it succeeded, or null when cancelled. fields: [{name, label, type
// ('text', 'number', 'select', 'checkbox', 'textarea'), value, options
// ([value, label] pairs), help, required, readonly, placeholder}]. onSubmit(values) sends
// them (values: name → string, or boolean for a checkbox) and may throw an
// ApiError or FieldError.
export function openForm({ title, intro, fields, submit, onSubmit, name }) {
  return new Promise((resolve) => {
    const id = 'f' + (++seq);
    const inputs = new Map();
    const errors = new Map();
    const rows = fields.map((f) => {
      const fid = id + '-' + f.name;
      let input;
      if (f.type === 'select') {
        input = h('select', { id: fid, name: f.name, disabled: !!f.readonly },
          f.options.map(([v, l]) => h('option', { value: v, selected: String(f.value ?? '') === v }, l)));
      } else if (f.type === 'textarea') {
        input = h('textarea', { id: fid, name: f.name, rows: 3, spellcheck: 'false', placeholder: f.placeholder });
        input.value = f.value ?? '';
      } else if (f.type === 'checkbox') {
        input = h('input', { id: fid, name: f.name, type: 'checkbox', checked: !!f.value });
      } else {
        input = h('input', { id: fid, name: f.name, type: 'text', inputmode: f.type === 'number' ? 'decimal' : null,
          value: f.value ?? '', autocomplete: 'off', spellcheck: 'false', placeholder: f.placeholder, required: !!f.required,
          readonly: !!f.readonly });
      }
      const err = h('p', { id: fid + '-error', class: 'field-error', role: 'alert', hidden: true });
      const help = f.help ? h('p', { id: fid + '-help', class: 'field-help muted small' }, f.help) : null;
      input.setAttribute('aria-describedby', [help ? fid + '-help' : '', fid + '-error'].filter(Boolean).join(' '));
      inputs.set(f.name, input);
      errors.set(f.name, err);
      return f.type === 'checkbox'
        ? h('div', { class: 'field field-check', dataset: { field: f.name } }, h('label', { for: fid, class: 'check' }, input, ' ', f.label), help, err)
        : h('div', { class: 'field', dataset: { field: f.name } }, h('label', { for: fid }, f.label), input, help, err);
    });
    const formError = h('p', { class: 'dialog-reason form-error', role: 'alert', hidden: true });
    const ok = h('button', { type: 'submit', class: 'btn btn-primary' }, submit || 'Save');
    const cancel = h('button', { type: 'button', class: 'btn' }, 'Cancel');
    const form = h('form', { method: 'dialog', novalidate: true },
      h('h2', { id: id + '-title' }, title), intro ? h('p', { class: 'muted small' }, intro) : null,
      h('div', { class: 'form-fields' }, rows), formError,
      h('div', { class: 'dialog-buttons' }, cancel, ok));
    const dlg = h('dialog', { class: 'form-dialog', 'aria-labelledby': id + '-title', dataset: { form: name || '' } }, form);
    document.body.append(dlg);

    const clear = () => {
      for (const [n, e] of errors) {
        e.hidden = true;
        setText(e, '');
        inputs.get(n).removeAttribute('aria-invalid');
      }
      formError.hidden = true;
    };
    // show puts message under the field it starts with, else above the
    // buttons.
    const show = (message, field) => {
      const name = field || String(message).split(/[\s.[]/, 1)[0];
      const e = errors.get(name);
      if (e) {
        setText(e, message);
        e.hidden = false;
        inputs.get(name).setAttribute('aria-invalid', 'true');
        inputs.get(name).focus();
      } else {
        setText(formError, message);
        formError.hidden = false;
      }
    };
    let result = null;
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      clear();
      const values = {};
      for (const [n, input] of inputs) values[n] = input.type === 'checkbox' ? input.checked : input.value.trim();
      ok.disabled = true;
      try {
        result = await onSubmit(values);
        dlg.close();
      } catch (e) {
        if (e instanceof FieldError) show(e.message, e.field);
        else if (e.status === 400 && e.detail) show(e.detail);
        else show(e.message, '-');
      } finally {
        ok.disabled = false;
      }
    });
    cancel.addEventListener('click', () => dlg.close());
    dlg.addEventListener('close', () => {
      dlg.remove();
      resolve(result);
    });
    dlg.showModal();
    const first = fields.find((f) => !f.readonly);
    if (first) inputs.get(first.name).focus();
  });
}

// num reads a number field: undefined when empty, else a number, or a
// FieldError.
export function num(values, name) {
  const v = values[name];
  if (v === '' || v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new FieldError(name, 'must be a number (got "' + v + '")');
  return n;
}

// json reads a JSON field: undefined when empty, else its value, or a
// FieldError.
export function json(values, name) {
  const v = values[name];
  if (v === '' || v === undefined) return undefined;
  try {
    return JSON.parse(v);
  } catch {
    throw new FieldError(name, 'must be JSON, e.g. {"to": "ada@example.com"}, "text" or 42');
  }
}
