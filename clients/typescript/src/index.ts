// dtq: the TypeScript client library of dtq, over its HTTP API.
//
//   Client         submit and manage tasks, workflows, schedules, dead letters, queues
//   Worker         run task handlers (leases over HTTP)
//   MessageQueue   the reliable keyed message queue
//
// docs/typescript.md is the guide.

export { Client, Workflows, type BatchResult, type ListOptions, type WorkflowOptions } from './client.js';
export { Schedules, DeadLetters, Queues, type ScheduleDefinition, type RedriveOptions } from './admin.js';
export { Worker, type Handler, type WorkerEvent, type WorkerOptions, type WorkerStats } from './worker.js';
export { TaskContext, type AbortCode, type ChildEnd, type WaitResult } from './context.js';
export { Permanent, RetryAfter, Suspended, isSuspended } from './handler-errors.js';
export { MessageQueue, Message, type MessageQueueOptions, type PutOptions, type ReceiveOptions, type TopicStats, type DeadMessage } from './mq.js';
export { task, chain, parallel, type WorkflowNode, type TaskNode, type ChainNode, type ParallelNode } from './workflow.js';
export type { SubmitOptions, TaskOptions, UniqueOptions, DebounceOptions, BatchItem } from './submission.js';
export type { ConnectionOptions } from './http.js';
export { DEFAULT_URL } from './http.js';
export { VERSION, LIBRARY } from './version.js';
export {
  DtqError, BadRequestError, InvalidError, UnauthorizedError, ForbiddenError, ForbiddenOriginError, NotFoundError,
  MethodNotAllowedError, ConflictError, TooLargeError, UnsupportedMediaTypeError, IdempotencyKeyReusedError,
  QueueFullError, UnavailableError, OutOfMemoryError, InProgressError, ExpiredError, NotCancellableError,
  SignalDeliveredError, TaskFinishedError, NotDeadError, NotScheduledError, QueueNotEmptyError, LeaseLostError, TopicFullError,
  InternalError, UpgradeRequiredError, ConnectionError,
  type ErrorDetails,
} from './errors.js';
export type * from './types.js';
