// Typed errors: one class per error code of the API (api/wire/error.go,
// the ErrorCode schema of api/openapi.json), all subclasses of DtqError, so
// that a caller can write `if (err instanceof NotFoundError)` or switch on
// `err.code`.

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
export class DtqError extends Error {
  /** The API's error code (`not_found`, `invalid_field`, …). */
  readonly code: string;
  /** The HTTP status, or 0 when no answer came (or the library refused the call). */
  readonly status: number;
  readonly taskId: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: string, status: number, message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.status = status;
    this.taskId = details.taskId;
    this.retryAfterSeconds = details.retryAfterSeconds;
  }
}

/** 400 bad_request: the body is not JSON, not an object, too deep, … */
export class BadRequestError extends DtqError {}

/**
 * 400 invalid_field: a field is missing, of the wrong type or out of range.
 * Also thrown by the library itself (status 0) for bad input, before any call.
 */
export class InvalidError extends DtqError {
  /** The field the message names, as the API spells it (`priority`, `root.chain[1].task.priority`). */
  readonly field: string;
  constructor(code: string, status: number, message: string, details: ErrorDetails = {}, field?: string) {
    super(code, status, message, details);
    this.field = field ?? fieldOf(message);
  }
}

/** 401 unauthorized: an API key is configured and X-API-Key is missing or wrong. */
export class UnauthorizedError extends DtqError {}
/** 403 forbidden: the API key's role may not call the route. */
export class ForbiddenError extends DtqError {}
/** 403 forbidden_origin. */
export class ForbiddenOriginError extends DtqError {}
/** 404 not_found: no such task, workflow, schedule, queue, or route. */
export class NotFoundError extends DtqError {}
/** 405 method_not_allowed. */
export class MethodNotAllowedError extends DtqError {}
/** 409 conflict. */
export class ConflictError extends DtqError {}
/** 413 too_large: body, payload or batch over the server's limit. */
export class TooLargeError extends DtqError {}
/** 415 unsupported_media_type. */
export class UnsupportedMediaTypeError extends DtqError {}
/** 422 idempotency_key_reused: the key was used for a different request; taskId is the original. */
export class IdempotencyKeyReusedError extends DtqError {}
/** 429 queue_full: the queue holds its maximum of unfinished tasks; see retryAfterSeconds. */
export class QueueFullError extends DtqError {}
/** 503 unavailable: Redis could not be reached, or the server is stopping; retry soon. */
export class UnavailableError extends DtqError {}
/** 503 out_of_memory: Redis reached maxmemory; nothing was stored. */
export class OutOfMemoryError extends UnavailableError {}
/** 409 in_progress: an Idempotency-Key replay while the original task runs; taskId is the original. */
export class InProgressError extends DtqError {}
/** 410 expired: an Idempotency-Key replay whose original task expired; taskId is the original. */
export class ExpiredError extends DtqError {}
/** 409 not_cancellable: the task already finished. */
export class NotCancellableError extends DtqError {}
/** 409 signal_delivered: the task has this signal already, or its wait timed out. */
export class SignalDeliveredError extends DtqError {}
/** 409 task_finished: a signal to a finished task. */
export class TaskFinishedError extends DtqError {}
/** 409 not_dead: requeue or discard of a task that is not a dead letter. */
export class NotDeadError extends DtqError {}
/** 409 not_scheduled: run now of a task that is not waiting in the schedule (not SCHEDULED). */
export class NotScheduledError extends DtqError {}
/** 409 queue_not_empty: delete of a queue that holds tasks, without force. */
export class QueueNotEmptyError extends DtqError {}
/** 409 lease_lost: the lease is not yours any more; nothing was changed. Drop the work. */
export class LeaseLostError extends DtqError {}
/** 429 topic_full: a message-queue topic holds max_size messages. */
export class TopicFullError extends DtqError {}
/** 500 internal. */
export class InternalError extends DtqError {}
/** 426 upgrade_required (the events WebSocket). */
export class UpgradeRequiredError extends DtqError {}
/** No answer: the server could not be reached, or did not answer in time (status 0). */
export class ConnectionError extends DtqError {}

type ErrorClass = new (code: string, status: number, message: string, details?: ErrorDetails) => DtqError;

const byCode: Record<string, ErrorClass> = {
  bad_request: BadRequestError,
  invalid_field: InvalidError,
  unauthorized: UnauthorizedError,
  forbidden: ForbiddenError,
  forbidden_origin: ForbiddenOriginError,
  not_found: NotFoundError,
  method_not_allowed: MethodNotAllowedError,
  conflict: ConflictError,
  too_large: TooLargeError,
  unsupported_media_type: UnsupportedMediaTypeError,
  idempotency_key_reused: IdempotencyKeyReusedError,
  queue_full: QueueFullError,
  unavailable: UnavailableError,
  out_of_memory: OutOfMemoryError,
  in_progress: InProgressError,
  expired: ExpiredError,
  not_cancellable: NotCancellableError,
  signal_delivered: SignalDeliveredError,
  task_finished: TaskFinishedError,
  not_dead: NotDeadError,
  not_scheduled: NotScheduledError,
  queue_not_empty: QueueNotEmptyError,
  lease_lost: LeaseLostError,
  topic_full: TopicFullError,
  internal: InternalError,
  upgrade_required: UpgradeRequiredError,
};

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
export function errorFromAnswer(status: number, detail: WireErrorDetail | undefined, retryAfter?: string | null): DtqError {
  const code = typeof detail?.code === 'string' ? detail.code : codeOfStatus(status);
  const message = typeof detail?.message === 'string' ? detail.message : `HTTP ${status}`;
  const details: ErrorDetails = {};
  if (typeof detail?.task_id === 'string' && detail.task_id !== '') details.taskId = detail.task_id;
  if (retryAfter) {
    const n = Number(retryAfter);
    if (Number.isFinite(n)) details.retryAfterSeconds = n;
  }
  const cls = byCode[code] ?? DtqError;
  return new cls(code, status, message, details);
}

/** invalid builds the error the library throws for bad input: it names the field. */
export function invalid(field: string, problem: string): InvalidError {
  return new InvalidError('invalid_field', 0, `${field} ${problem}`, {}, field);
}

/** The code an answer without the error shape (a proxy's page) gets from its status. */
function codeOfStatus(status: number): string {
  switch (status) {
    case 400: return 'bad_request';
    case 401: return 'unauthorized';
    case 404: return 'not_found';
    case 405: return 'method_not_allowed';
    case 409: return 'conflict';
    case 413: return 'too_large';
    case 415: return 'unsupported_media_type';
    case 429: return 'queue_full';
    case 502: case 503: case 504: return 'unavailable';
    default: return status >= 500 ? 'internal' : 'bad_request';
  }
}

/**
 * fieldOf reads the field an invalid_field message names: the server starts
 * its messages with the field (`priority must be …`,
 * `root.chain[1].task.priority must be …`), save a few phrases.
 */
function fieldOf(message: string): string {
  if (message.startsWith('the Idempotency-Key header')) return 'Idempotency-Key';
  if (message.startsWith('the lease token')) return 'lease';
  const first = message.split(/\s/, 1)[0] ?? '';
  return first.replace(/[:,]$/, '');
}
