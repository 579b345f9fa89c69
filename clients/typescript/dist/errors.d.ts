/** The fields every API error answer may carry besides code and message. */
export interface ErrorDetails {
    /** The task (or workflow) an in_progress, expired or idempotency_key_reused answer is about. */
    taskId?: string;
    /** Seconds the server asked to wait before retrying (the Retry-After header). */
    retryAfterSeconds?: number;
}
/**
 * An error from dtq: an API answer of status 400 and above
 * (`{"error": {"code", "message"}}`), a request the library refused before
 * sending it (status 0, code `invalid_field`), or a server it could not reach
 * (status 0, code `connection_failed`).
 */
export declare class DtqError extends Error {
    /** The API's error code (`not_found`, `invalid_field`, …). */
    readonly code: string;
    /** The HTTP status, or 0 when no answer came (or the library refused the call). */
    readonly status: number;
    readonly taskId: string | undefined;
    readonly retryAfterSeconds: number | undefined;
    constructor(code: string, status: number, message: string, details?: ErrorDetails);
}
/** 400 bad_request: the body is not JSON, not an object, too deep, … */
export declare class BadRequestError extends DtqError {
}
/**
 * 400 invalid_field: a field is missing, of the wrong type or out of range.
 * Also thrown by the library itself (status 0) for bad input, before any call.
 */
export declare class InvalidError extends DtqError {
    /** The field the message names, as the API spells it (`priority`, `root.chain[1].task.priority`). */
    readonly field: string;
    constructor(code: string, status: number, message: string, details?: ErrorDetails, field?: string);
}
/** 401 unauthorized: an API key is configured and X-API-Key is missing or wrong. */
export declare class UnauthorizedError extends DtqError {
}
/** 403 forbidden: the API key's role may not call the route. */
export declare class ForbiddenError extends DtqError {
}
/** 403 forbidden_origin. */
export declare class ForbiddenOriginError extends DtqError {
}
/** 404 not_found: no such task, workflow, schedule, queue, or route. */
export declare class NotFoundError extends DtqError {
}
/** 405 method_not_allowed. */
export declare class MethodNotAllowedError extends DtqError {
}
/** 409 conflict. */
export declare class ConflictError extends DtqError {
}
/** 413 too_large: body, payload or batch over the server's limit. */
export declare class TooLargeError extends DtqError {
}
/** 415 unsupported_media_type. */
export declare class UnsupportedMediaTypeError extends DtqError {
}
/** 422 idempotency_key_reused: the key was used for a different request; taskId is the original. */
export declare class IdempotencyKeyReusedError extends DtqError {
}
/** 429 queue_full: the queue holds its maximum of unfinished tasks; see retryAfterSeconds. */
export declare class QueueFullError extends DtqError {
}
/** 503 unavailable: Redis could not be reached, or the server is stopping; retry soon. */
export declare class UnavailableError extends DtqError {
}
/** 503 out_of_memory: Redis reached maxmemory; nothing was stored. */
export declare class OutOfMemoryError extends UnavailableError {
}
/** 409 in_progress: an Idempotency-Key replay while the original task runs; taskId is the original. */
export declare class InProgressError extends DtqError {
}
/** 410 expired: an Idempotency-Key replay whose original task expired; taskId is the original. */
export declare class ExpiredError extends DtqError {
}
/** 409 not_cancellable: the task already finished. */
export declare class NotCancellableError extends DtqError {
}
/** 409 signal_delivered: the task has this signal already, or its wait timed out. */
export declare class SignalDeliveredError extends DtqError {
}
/** 409 task_finished: a signal to a finished task. */
export declare class TaskFinishedError extends DtqError {
}
/** 409 not_dead: requeue or discard of a task that is not a dead letter. */
export declare class NotDeadError extends DtqError {
}
/** 409 not_scheduled: run now of a task that is not waiting in the schedule (not SCHEDULED). */
export declare class NotScheduledError extends DtqError {
}
/** 409 queue_not_empty: delete of a queue that holds tasks, without force. */
export declare class QueueNotEmptyError extends DtqError {
}
/** 409 lease_lost: the lease is not yours any more; nothing was changed. Drop the work. */
export declare class LeaseLostError extends DtqError {
}
/** 429 topic_full: a message-queue topic holds max_size messages. */
export declare class TopicFullError extends DtqError {
}
/** 500 internal. */
export declare class InternalError extends DtqError {
}
/** 426 upgrade_required (the events WebSocket). */
export declare class UpgradeRequiredError extends DtqError {
}
/** No answer: the server could not be reached, or did not answer in time (status 0). */
export declare class ConnectionError extends DtqError {
}
/** The API's `{"code", "message", "task_id"}` error object. */
export interface WireErrorDetail {
    code?: unknown;
    message?: unknown;
    task_id?: unknown;
}
/**
 * errorFromAnswer builds the typed error of an API error answer: the class
 * of its code (DtqError for a code this version does not know).
 */
export declare function errorFromAnswer(status: number, detail: WireErrorDetail | undefined, retryAfter?: string | null): DtqError;
/** invalid builds the error the library throws for bad input: it names the field. */
export declare function invalid(field: string, problem: string): InvalidError;
