/** Throw Permanent to send the task to the dead letters at once, without a retry. */
export declare class Permanent extends Error {
    constructor(message: string, options?: {
        cause?: unknown;
    });
}
/** Throw RetryAfter to retry the task no sooner than `seconds` from now (its attempts permitting). */
export declare class RetryAfter extends Error {
    readonly seconds: number;
    constructor(seconds: number, message: string, options?: {
        cause?: unknown;
    });
}
declare const suspendedMark: unique symbol;
/**
 * Suspended is thrown by ctx.sleep, ctx.waitFor and ctx.child when the server
 * ended the lease with the task suspended (the sleep, wait or child is not
 * over yet): the task runs again from the top when it is due, its recorded
 * steps skipped. A handler must let it propagate — catching it and going on
 * does nothing useful (the lease is gone: later calls throw it again, and the
 * worker reports no outcome for this execution).
 */
export declare class Suspended extends Error {
    /** What the task waits for: sleep, signal or child (the server's `for`), and until when. */
    readonly until: Date | undefined;
    readonly [suspendedMark] = true;
    constructor(message: string, until?: Date);
}
/** isSuspended tells a Suspended signal, also one from another copy of this library. */
export declare function isSuspended(e: unknown): e is Suspended;
export {};
