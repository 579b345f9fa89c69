// dtq: the TypeScript client library of dtq, over its HTTP API.
//
//   Client         submit and manage tasks, workflows, schedules, dead letters, queues
//   Worker         run task handlers (leases over HTTP)
//   MessageQueue   the reliable keyed message queue
//
// docs/typescript.md is the guide.
export { Client, Workflows } from './client.js';
export { Schedules, DeadLetters, Queues } from './admin.js';
export { Worker } from './worker.js';
export { TaskContext } from './context.js';
export { Permanent, RetryAfter, Suspended, isSuspended } from './handler-errors.js';
export { MessageQueue, Message } from './mq.js';
export { task, chain, parallel } from './workflow.js';
export { DEFAULT_URL } from './http.js';
export { VERSION, LIBRARY } from './version.js';
export { DtqError, BadRequestError, InvalidError, UnauthorizedError, ForbiddenError, ForbiddenOriginError, NotFoundError, MethodNotAllowedError, ConflictError, TooLargeError, UnsupportedMediaTypeError, IdempotencyKeyReusedError, QueueFullError, UnavailableError, OutOfMemoryError, InProgressError, ExpiredError, NotCancellableError, SignalDeliveredError, TaskFinishedError, NotDeadError, NotScheduledError, QueueNotEmptyError, LeaseLostError, TopicFullError, InternalError, UpgradeRequiredError, ConnectionError, } from './errors.js';
