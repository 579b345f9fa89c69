// Checks of the library's input: each throws an InvalidError (status 0) that
// names the field, before anything is sent. The server checks the exact
// ranges again (its messages name the field too); these catch the mistakes a
// JavaScript caller can make that TypeScript's types would have caught.
import { invalid } from './errors.js';
export function checkKeys(where, o, allowed) {
    for (const k of Object.keys(o)) {
        if (!allowed.includes(k)) {
            throw invalid(where ? `${where}.${k}` : k, `is not an option here (allowed: ${allowed.join(', ')})`);
        }
    }
}
export function checkObject(field, v) {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
        throw invalid(field, `must be an object (got ${describe(v)})`);
    }
}
export function checkString(field, v, { empty = false } = {}) {
    if (typeof v !== 'string')
        throw invalid(field, `must be a string (got ${describe(v)})`);
    if (!empty && v === '')
        throw invalid(field, 'must not be empty');
}
export function checkInt(field, v, min, max) {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
        throw invalid(field, `must be an integer from ${min} to ${max} (got ${describe(v)})`);
    }
}
export function checkNumber(field, v, min, { exclusive = false } = {}) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || (exclusive && v === min)) {
        throw invalid(field, `must be a number ${exclusive ? '>' : '≥'} ${min} (got ${describe(v)})`);
    }
}
export function checkStrings(field, v) {
    if (!Array.isArray(v) || v.length === 0 || v.some((s) => typeof s !== 'string' || s === '')) {
        throw invalid(field, `must be a non-empty array of non-empty strings (got ${describe(v)})`);
    }
}
export function checkFunction(field, v) {
    if (typeof v !== 'function')
        throw invalid(field, `must be a function (got ${describe(v)})`);
}
/** describe renders a value for an error message. */
export function describe(v) {
    if (v === undefined)
        return 'undefined';
    if (typeof v === 'function')
        return 'a function';
    if (v instanceof Date)
        return `Date ${String(v)}`;
    try {
        const s = JSON.stringify(v);
        return s.length > 60 ? s.slice(0, 57) + '...' : s;
    }
    catch {
        return String(v);
    }
}
/** timeParam renders a Date or an RFC 3339 string for a query. */
export function timeParam(field, v) {
    if (v instanceof Date) {
        if (Number.isNaN(v.getTime()))
            throw invalid(field, 'is an invalid Date');
        return v.toISOString();
    }
    checkString(field, v);
    return v;
}
