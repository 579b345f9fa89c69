// Workflows as submitted: a graph of task, chain and parallel nodes, and
// the builders that make one (docs/workflows.md).
import { invalid } from './errors.js';
import { taskBody } from './submission.js';
import { checkKeys, checkObject } from './validate.js';
/** task builds a task node. */
export function task(type, payload, opts = {}) {
    return { task: { type, ...(payload === undefined ? {} : { payload }), ...opts } };
}
/** chain builds a chain of nodes. */
export function chain(...nodes) {
    return { chain: nodes };
}
/** parallel builds a parallel node, with its callbacks. */
export function parallel(nodes, callbacks = {}) {
    return { parallel: nodes, ...callbacks };
}
/** nodeBody is the wire form of a node; path names it in errors (root.chain[1].task). */
export function nodeBody(path, node) {
    checkObject(path, node);
    const kinds = ['task', 'chain', 'parallel'].filter((k) => k in node);
    if (kinds.length !== 1)
        throw invalid(path, `must have exactly one of task, chain and parallel (got ${kinds.join(', ') || 'none'})`);
    if ('task' in node) {
        checkKeys(path, node, ['task']);
        checkObject(`${path}.task`, node.task);
        const { type, payload, ...opts } = node.task;
        checkKeys(`${path}.task`, node.task, ['type', 'payload', 'priority', 'maxAttempts', 'timeoutSeconds']);
        return { task: taskBody(`${path}.task`, type, payload, opts) };
    }
    if ('chain' in node) {
        checkKeys(path, node, ['chain']);
        return { chain: list(`${path}.chain`, node.chain) };
    }
    checkKeys(path, node, ['parallel', 'onSuccess', 'onComplete']);
    const b = { parallel: list(`${path}.parallel`, node.parallel) };
    if (node.onSuccess !== undefined)
        b['on_success'] = nodeBody(`${path}.onSuccess`, node.onSuccess);
    if (node.onComplete !== undefined)
        b['on_complete'] = nodeBody(`${path}.onComplete`, node.onComplete);
    return b;
}
function list(path, nodes) {
    if (!Array.isArray(nodes) || nodes.length === 0)
        throw invalid(path, 'must be a non-empty array of nodes');
    return nodes.map((n, i) => nodeBody(`${path}[${i}]`, n));
}
