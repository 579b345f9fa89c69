// The HTTP transport: JSON requests to the API over a pool of keep-alive
// connections (node:http, or node:https for an https URL).
//
// Why node:http and not fetch: measured on this project's API (docs/typescript.md,
// "Choices"), node:http with a keep-alive agent answered small JSON requests
// about twice as fast as Node 20's fetch (undici through web streams), and the
// worker's speed is mostly the speed of its HTTP calls.

import * as http from 'node:http';
import * as https from 'node:https';
import { ConnectionError, errorFromAnswer, invalid, type WireErrorDetail } from './errors.js';

/** The default API: where `dtq serve` listens. */
export const DEFAULT_URL = 'http://localhost:8000';

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
export class Transport {
  readonly url: string;
  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;
  private readonly agent: http.Agent;
  private readonly mod: typeof http | typeof https;
  private readonly host: string;
  private readonly port: string;
  private readonly basePath: string;

  constructor(opts: ConnectionOptions = {}) {
    const raw = opts.url ?? process.env['DTQ_API_URL'] ?? DEFAULT_URL;
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw invalid('url', `must be an absolute http(s) URL (got ${JSON.stringify(raw)})`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      throw invalid('url', `must be an http or https URL (got ${JSON.stringify(raw)})`);
    }
    this.url = raw.replace(/\/+$/, '');
    const key = opts.apiKey ?? process.env['DTQ_API_KEY'];
    this.apiKey = key === undefined || key === '' ? undefined : key;
    const timeout = opts.timeoutSeconds ?? 30;
    if (!(typeof timeout === 'number' && timeout > 0)) throw invalid('timeoutSeconds', `must be a number > 0 (got ${String(timeout)})`);
    this.timeoutMs = timeout * 1000;
    const maxSockets = opts.maxConnections ?? 64;
    if (!Number.isInteger(maxSockets) || maxSockets < 1) throw invalid('maxConnections', `must be an integer ≥ 1 (got ${String(maxSockets)})`);
    this.mod = u.protocol === 'https:' ? https : http;
    const AgentClass = u.protocol === 'https:' ? https.Agent : http.Agent;
    // An idle connection is closed after 50 s, before the server's own idle
    // timeout (2 minutes for dtq serve) could close it as it is reused.
    this.agent = new AgentClass({ keepAlive: true, maxSockets, scheduling: 'lifo', timeout: 50_000 });
    this.host = u.hostname.replace(/^\[|\]$/g, '');
    this.port = u.port;
    this.basePath = u.pathname.replace(/\/+$/, '');
  }

  /** request sends one call; body undefined sends none. */
  request<T>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<Answer<T>> {
    // A string body (not a Buffer): node:http then writes the head and the
    // body in one piece, one syscall instead of a writev of two.
    const payload = body === undefined ? undefined : body instanceof RawJson ? body.text : JSON.stringify(body);
    const headers: Record<string, string> = { Accept: 'application/json', ...opts.headers };
    if (payload !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(payload, 'utf8'));
    }
    if (this.apiKey !== undefined) headers['X-API-Key'] = this.apiKey;
    const timeoutMs = opts.timeoutSeconds !== undefined ? opts.timeoutSeconds * 1000 : this.timeoutMs;
    return this.send<T>(method, path, payload, headers, timeoutMs, opts.signal, false);
  }

  /**
   * send makes one attempt. A kept-alive connection the server closed just as
   * it was reused (ECONNRESET before any answer: the server never read the
   * request) is tried once more on a fresh one, as Node's documentation advises.
   */
  private send<T>(method: string, path: string, payload: string | undefined, headers: Record<string, string>, timeoutMs: number,
    signal: AbortSignal | undefined, retried: boolean): Promise<Answer<T>> {
    return new Promise<Answer<T>>((resolve, reject) => {
      let settled = false;
      let answered = false;
      const fail = (err: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (!retried && !answered && req.reusedSocket && (err as NodeJS.ErrnoException).code === 'ECONNRESET') {
          resolve(this.send<T>(method, path, payload, headers, timeoutMs, signal, true));
          return;
        }
        reject(new ConnectionError('connection_failed', 0, `${method} ${this.url}${path}: ${err.message}`, {}));
      };
      const req = this.mod.request({
        method, host: this.host, port: this.port, path: this.basePath + path, headers, agent: this.agent,
        ...(signal ? { signal } : {}),
      }, (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', fail);
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          const status = res.statusCode ?? 0;
          const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = null;
          if (text !== '') {
            try {
              parsed = JSON.parse(text);
            } catch {
              parsed = status >= 400 ? { error: { message: text.slice(0, 500) } } : text;
            }
          }
          if (status >= 400) {
            const detail = (parsed as { error?: WireErrorDetail } | null)?.error;
            const ra = res.headers['retry-after'];
            reject(errorFromAnswer(status, detail, Array.isArray(ra) ? ra[0] : ra));
            return;
          }
          resolve({ status, body: parsed as T, headers: res.headers });
        });
      });
      const timer = setTimeout(() => {
        fail(new Error(`no answer within ${timeoutMs / 1000} s`));
        req.destroy();
      }, timeoutMs);
      req.on('error', fail);
      if (payload !== undefined) req.end(payload, 'utf8');
      else req.end();
    });
  }

  /** close ends the idle keep-alive connections (open calls finish). */
  close(): void {
    this.agent.destroy();
  }
}

/** RawJson is a body already encoded as JSON text: sent as it is. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** path joins path segments, each escaped: ids, queue and topic names, step names. */
export function seg(s: string): string {
  return encodeURIComponent(s);
}
