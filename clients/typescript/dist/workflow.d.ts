import { type TaskOptions } from './submission.js';
/** A task node: a task of the workflow's queue. */
export interface TaskNode {
    task: {
        type: string;
        payload?: unknown;
    } & TaskOptions;
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
export declare function task(type: string, payload?: unknown, opts?: TaskOptions): TaskNode;
/** chain builds a chain of nodes. */
export declare function chain(...nodes: WorkflowNode[]): ChainNode;
/** parallel builds a parallel node, with its callbacks. */
export declare function parallel(nodes: WorkflowNode[], callbacks?: {
    onSuccess?: WorkflowNode;
    onComplete?: WorkflowNode;
}): ParallelNode;
/** nodeBody is the wire form of a node; path names it in errors (root.chain[1].task). */
export declare function nodeBody(path: string, node: WorkflowNode): Record<string, unknown>;
