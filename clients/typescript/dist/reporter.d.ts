import { DtqError } from './errors.js';
import { type Transport } from './http.js';
/** An outcome to record: a result (already JSON text), or an error with its class. */
export type Outcome = {
    lease: string;
    taskId: string;
    /** Epoch ms after which a report is given up. */
    deadline: number;
} & ({
    kind: 'complete';
    resultJson: string;
} | {
    kind: 'fail';
    error: string;
    class: 'retryable' | 'permanent';
    retryAfterSeconds?: number;
});
/** What the server answered for one outcome: the task's status after it, or the item's error. */
export interface Recorded {
    status?: string;
    error?: DtqError;
}
export declare const MAX_BATCH = 100;
export declare class Reporter {
    private readonly http;
    private readonly onRecorded;
    private pending;
    private flushing;
    /** batch until the server shows it has no batch route. */
    private batch;
    constructor(http: Transport, onRecorded: (o: Outcome, r: Recorded) => void);
    /** add queues an outcome; it is sent in this turn's call, or, while one is in flight, in the next. */
    add(o: Outcome): void;
    /** idle resolves once every outcome added so far is recorded or given up. */
    idle(): Promise<void>;
    /** usesBatches tells whether the server took the batch route (false after it answered 404). */
    get usesBatches(): boolean;
    private loop;
    private send;
    private sendOne;
}
