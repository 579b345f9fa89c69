// Workflows as submitted: a graph of task, chain and parallel nodes, and
// the builders that make one (docs/workflows.md).

import { invalid } from './errors.js';
import { taskBody, type TaskOptions } from './submission.js';
import { checkKeys, checkObject } from './validate.js';

/** A task node: a task of the workflow's queue. */
export interface TaskNode {
  task: { type: string; payload?: unknown } & TaskOptions;
}

/** A chain: each node runs once the one before succeeded, and gets its result as `previous`. */
export interface ChainNode {
  chain: WorkflowNode[];
}

/** Nodes that run at once; onSuccess once all succeeded, onComplete once all ended. */
export interface ParallelNode {
  parallel: WorkflowNode[];
  onSuccess?: WorkflowNode;
  onComplete?: WorkflowNode;
}

export type WorkflowNode = TaskNode | ChainNode | ParallelNode;

/** task builds a task node. */
export function task(type: string, payload?: unknown, opts: TaskOptions = {}): TaskNode {
  return { task: { type, ...(payload === undefined ? {} : { payload }), ...opts } };
}

/** chain builds a chain of nodes. */
export function chain(...nodes: WorkflowNode[]): ChainNode {
  return { chain: nodes };
}

/** parallel builds a parallel node, with its callbacks. */
export function parallel(nodes: WorkflowNode[], callbacks: { onSuccess?: WorkflowNode; onComplete?: WorkflowNode } = {}): ParallelNode {
  return { parallel: nodes, ...callbacks };
}

/** nodeBody is the wire form of a node; path names it in errors (root.chain[1].task). */
export function nodeBody(path: string, node: WorkflowNode): Record<string, unknown> {
  checkObject(path, node);
  const kinds = ['task', 'chain', 'parallel'].filter((k) => k in node);
  if (kinds.length !== 1) throw invalid(path, `must have exactly one of task, chain and parallel (got ${kinds.join(', ') || 'none'})`);
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
  const b: Record<string, unknown> = { parallel: list(`${path}.parallel`, node.parallel) };
  if (node.onSuccess !== undefined) b['on_success'] = nodeBody(`${path}.onSuccess`, node.onSuccess);
  if (node.onComplete !== undefined) b['on_complete'] = nodeBody(`${path}.onComplete`, node.onComplete);
  return b;
}

function list(path: string, nodes: unknown): unknown[] {
  if (!Array.isArray(nodes) || nodes.length === 0) throw invalid(path, 'must be a non-empty array of nodes');
  return nodes.map((n, i) => nodeBody(`${path}[${i}]`, n as WorkflowNode));
}
