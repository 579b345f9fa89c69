/** The default API: where `dtq serve` listens. */
export declare const DEFAULT_URL = "http://localhost:8000";
/** The options every object that talks to the API takes. */
export interface ConnectionOptions {
    /** The API's base URL. Default: $DTQ_API_URL, else http://localhost:8000. */
    url?: string;
    /** Sent as X-API-Key. Default: $DTQ_API_KEY (none when unset). */
    apiKey?: string;
    /** How long a call may take before it fails with a ConnectionError (seconds). Default 30. */
    timeoutSeconds?: number;
    /** Most connections open at once to the API. Default 64. */
    maxConnections?: number;
}
/** One call's extras. */
export interface RequestOptions {
    headers?: Record<string, string>;
    /** Overrides the transport's timeout (seconds), e.g. for a long poll. */
    timeoutSeconds?: number;
    /** Aborts the call (it then rejects with a ConnectionError whose cause is the abort). */
    signal?: AbortSignal;
}
/** An answer of status below 400: the decoded JSON (null for an empty body). */
export interface Answer<T> {
    status: number;
    body: T;
    /** The answer's headers, names in lower case (typed without node:http, so that users need no @types/node). */
    headers: Record<string, string | string[] | undefined>;
}
/**
 * Transport sends JSON requests to one API. It keeps its connections open
 * between calls (keep-alive, most recently used first) so that a busy worker
 * never opens a TCP connection per call. Answers of status 400 and above
 * reject with the DtqError subclass of their code.
 */
export declare class Transport {
    readonly url: string;
    private readonly apiKey;
    private readonly timeoutMs;
    private readonly agent;
    private readonly mod;
    private readonly host;
    private readonly port;
    private readonly basePath;
    constructor(opts?: ConnectionOptions);
    /** request sends one call; body undefined sends none. */
    request<T>(method: string, path: string, body?: unknown, opts?: RequestOptions): Promise<Answer<T>>;
    /**
     * send makes one attempt. A kept-alive connection the server closed just as
     * it was reused (ECONNRESET before any answer: the server never read the
     * request) is tried once more on a fresh one, as Node's documentation advises.
     */
    private send;
    /** close ends the idle keep-alive connections (open calls finish). */
    close(): void;
}
/** RawJson is a body already encoded as JSON text: sent as it is. */
export declare class RawJson {
    readonly text: string;
    constructor(text: string);
}
/** path joins path segments, each escaped: ids, queue and topic names, step names. */
export declare function seg(s: string): string;
