// What a handler throws to say how its task failed, and the signal by which
// a durable sleep, wait or child ends an execution that suspended.
/** Throw Permanent to send the task to the dead letters at once, without a retry. */
export class Permanent extends Error {
    constructor(message, options) {
        super(message, options);
        this.name = 'Permanent';
    }
}
/** Throw RetryAfter to retry the task no sooner than `seconds` from now (its attempts permitting). */
export class RetryAfter extends Error {
    seconds;
    constructor(seconds, message, options) {
        super(message, options);
        if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
            throw new TypeError(`RetryAfter: seconds must be a number ≥ 0 (got ${String(seconds)})`);
        }
        this.name = 'RetryAfter';
        this.seconds = seconds;
    }
}
const suspendedMark = Symbol.for('dtq.suspended');
/**
 * Suspended is thrown by ctx.sleep, ctx.waitFor and ctx.child when the server
 * ended the lease with the task suspended (the sleep, wait or child is not
 * over yet): the task runs again from the top when it is due, its recorded
 * steps skipped. A handler must let it propagate — catching it and going on
 * does nothing useful (the lease is gone: later calls throw it again, and the
 * worker reports no outcome for this execution).
 */
export class Suspended extends Error {
    /** What the task waits for: sleep, signal or child (the server's `for`), and until when. */
    until;
    [suspendedMark] = true;
    constructor(message, until) {
        super(message);
        this.name = 'Suspended';
        this.until = until;
    }
}
/** isSuspended tells a Suspended signal, also one from another copy of this library. */
export function isSuspended(e) {
    return typeof e === 'object' && e !== null && e[suspendedMark] === true;
}
