// MessageQueue: the reliable keyed message queue (package queue) over HTTP
// (docs/workers.md, "The reliable message queue over HTTP"): put bytes on a
// topic, lease them in a consumer group shared with Go subscriptions, and
// settle each lease once (ack, release, nak or term).

import * as os from 'node:os';
import { invalid } from './errors.js';
import { Transport, seg, type ConnectionOptions } from './http.js';
import { checkInt, checkKeys, checkNumber, checkObject, checkString, checkStrings, describe } from './validate.js';

export interface MessageQueueOptions extends ConnectionOptions {
  /** The consumer's name in its group. Default <hostname>-<pid>. */
  worker?: string;
  /** The consumer group receive uses unless told otherwise. Default: the server's. */
  group?: string;
  /** A lease not extended or settled for this long goes to the group's next consumer (seconds). Default: the server's (30). */
  leaseSeconds?: number;
}

export interface PutOptions {
  /** While a message of this key is live, a put of the same key is not published. */
  key?: string;
  delaySeconds?: number;
  /** Refuse (TopicFullError) when the topic holds this many messages. */
  maxSize?: number;
}

export interface ReceiveOptions {
  /** Highest priority first. */
  topics: string[];
  /** At most this many messages (1-100). Default 1. */
  max?: number;
  /** How long to wait for a first message (seconds, ≤ 20). Default 0: answer at once. */
  waitSeconds?: number;
  leaseSeconds?: number;
  group?: string;
}

/** A topic's counts for a consumer group. */
export interface TopicStats {
  topic: string;
  group: string;
  queued: number;
  inFlight: number;
  delayed: number;
}

/** A dead letter of the message queue. */
export interface DeadMessage {
  id: string;
  topic: string;
  messageId: string;
  key: string;
  deliveries: number;
  reason: string;
  data: Uint8Array;
}

export class MessageQueue {
  readonly queue: string;
  private readonly http: Transport;
  private readonly worker: string;
  private readonly group: string | undefined;
  private readonly leaseSeconds: number | undefined;

  constructor(queue: string, opts: MessageQueueOptions = {}) {
    checkString('queue', queue);
    checkObject('options', opts);
    checkKeys('', opts, ['url', 'apiKey', 'timeoutSeconds', 'maxConnections', 'worker', 'group', 'leaseSeconds']);
    this.queue = queue;
    this.worker = opts.worker ?? `${os.hostname()}-${process.pid}`;
    checkString('worker', this.worker);
    if (opts.group !== undefined) checkString('group', opts.group);
    this.group = opts.group;
    if (opts.leaseSeconds !== undefined) checkNumber('leaseSeconds', opts.leaseSeconds, 0, { exclusive: true });
    this.leaseSeconds = opts.leaseSeconds;
    this.http = new Transport(opts);
  }

  private get base(): string {
    return `/api/v1/mq/${seg(this.queue)}`;
  }

  /**
   * put puts a message (bytes, or a string sent as UTF-8) on topic. It answers
   * published: false, publishing nothing, while a message of the same key is live.
   */
  async put(topic: string, data: Uint8Array | string, opts: PutOptions = {}): Promise<{ published: boolean }> {
    checkString('topic', topic);
    checkObject('options', opts);
    checkKeys('', opts, ['key', 'delaySeconds', 'maxSize']);
    const body: Record<string, unknown> = {};
    if (typeof data === 'string') body['data'] = data;
    else if (data instanceof Uint8Array) body['data_base64'] = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
    else throw invalid('data', `must be a Uint8Array or a string (got ${describe(data)})`);
    if (opts.key !== undefined) {
      checkString('key', opts.key);
      body['key'] = opts.key;
    }
    if (opts.delaySeconds !== undefined) {
      checkNumber('delaySeconds', opts.delaySeconds, 0);
      body['delay_seconds'] = opts.delaySeconds;
    }
    if (opts.maxSize !== undefined) {
      checkInt('maxSize', opts.maxSize, 1, Number.MAX_SAFE_INTEGER);
      body['max_size'] = opts.maxSize;
    }
    const a = await this.http.request<{ published: boolean }>('POST', `${this.base}/topics/${seg(topic)}/messages`, body);
    return { published: a.body.published };
  }

  /** receive leases up to max messages of topics, waiting up to waitSeconds for a first one. */
  async receive(opts: ReceiveOptions): Promise<Message[]> {
    checkObject('options', opts);
    checkKeys('', opts, ['topics', 'max', 'waitSeconds', 'leaseSeconds', 'group']);
    checkStrings('topics', opts.topics);
    const body: Record<string, unknown> = { worker: this.worker, topics: opts.topics };
    const group = opts.group ?? this.group;
    if (group !== undefined) {
      checkString('group', group);
      body['group'] = group;
    }
    if (opts.max !== undefined) {
      checkInt('max', opts.max, 1, 100);
      body['max'] = opts.max;
    }
    let wait = 0;
    if (opts.waitSeconds !== undefined) {
      checkNumber('waitSeconds', opts.waitSeconds, 0);
      if (opts.waitSeconds > 20) throw invalid('waitSeconds', `must be at most 20 (got ${opts.waitSeconds})`);
      wait = opts.waitSeconds;
      body['wait_seconds'] = wait;
    }
    const lease = opts.leaseSeconds ?? this.leaseSeconds;
    if (lease !== undefined) {
      checkNumber('leaseSeconds', lease, 0, { exclusive: true });
      body['lease_seconds'] = lease;
    }
    const a = await this.http.request<{ leases: WireMessage[] }>('POST', `${this.base}/leases`, body, { timeoutSeconds: wait + 15 });
    return a.body.leases.map((m) => new Message(this.http, this.base, m));
  }

  /** topic answers a topic's counts for a group (default: the queue's default group). */
  async topic(topic: string, opts: { group?: string } = {}): Promise<TopicStats> {
    checkString('topic', topic);
    const group = opts.group ?? this.group;
    const q = group === undefined ? '' : `?group=${encodeURIComponent(group)}`;
    const a = await this.http.request<{ topic: string; group: string; queued: number; in_flight: number; delayed: number }>(
      'GET', `${this.base}/topics/${seg(topic)}${q}`);
    const b = a.body;
    return { topic: b.topic, group: b.group, queued: b.queued, inFlight: b.in_flight, delayed: b.delayed };
  }

  /** dead lists the queue's dead letters, newest first. */
  async dead(opts: { limit?: number } = {}): Promise<DeadMessage[]> {
    let q = '';
    if (opts.limit !== undefined) {
      checkInt('limit', opts.limit, 1, 10_000);
      q = `?limit=${opts.limit}`;
    }
    const a = await this.http.request<{ dead: Record<string, unknown>[] }>('GET', `${this.base}/dead${q}`);
    return a.body.dead.map((d) => ({
      id: d['id'] as string, topic: d['topic'] as string, messageId: d['message_id'] as string, key: (d['key'] as string | undefined) ?? '',
      deliveries: d['deliveries'] as number, reason: (d['reason'] as string | undefined) ?? '', data: bytes(d['data_base64']),
    }));
  }

  /** close ends the idle connections. */
  close(): void {
    this.http.close();
  }
}

interface WireMessage {
  lease: string;
  deadline: string;
  topic: string;
  id: string;
  key?: string;
  deliveries: number;
  data_base64: string;
}

/** A leased message: settle it once (ack, release, nak or term), extend it while working on it. */
export class Message {
  readonly lease: string;
  readonly topic: string;
  /** The message's stream id. */
  readonly id: string;
  /** Its key (the server makes one for a message put without). */
  readonly key: string;
  /** How many times it was delivered, this one included. */
  readonly deliveries: number;
  /** The body. */
  readonly data: Uint8Array;
  /** When the lease is lost unless extended or settled. */
  deadline: Date;

  constructor(private readonly http: Transport, private readonly base: string, m: WireMessage) {
    this.lease = m.lease;
    this.topic = m.topic;
    this.id = m.id;
    this.key = m.key ?? '';
    this.deliveries = m.deliveries;
    this.data = bytes(m.data_base64);
    this.deadline = new Date(m.deadline);
  }

  /** text decodes the body as UTF-8. */
  text(): string {
    return Buffer.from(this.data.buffer, this.data.byteOffset, this.data.byteLength).toString('utf8');
  }

  /** json parses the body as JSON. */
  json<T = unknown>(): T {
    return JSON.parse(this.text()) as T;
  }

  /** ack settles the message as done. LeaseLostError: it is no longer yours (nothing changed). */
  async ack(): Promise<void> {
    await this.settle('ack');
  }

  /** release gives the message back at once, to topic (default its own), without counting a failure. */
  async release(topic?: string, opts: { maxSize?: number } = {}): Promise<void> {
    const t = topic ?? this.topic;
    checkString('topic', t);
    const body: Record<string, unknown> = { topic: t };
    if (opts.maxSize !== undefined) {
      checkInt('maxSize', opts.maxSize, 1, Number.MAX_SAFE_INTEGER);
      body['max_size'] = opts.maxSize;
    }
    await this.settle('release', body);
  }

  /** nak gives the message back for another delivery, after delaySeconds. */
  async nak(opts: { delaySeconds?: number } = {}): Promise<void> {
    let body: Record<string, unknown> | undefined;
    if (opts.delaySeconds !== undefined) {
      checkNumber('delaySeconds', opts.delaySeconds, 0);
      body = { delay_seconds: opts.delaySeconds };
    }
    await this.settle('nak', body);
  }

  /** term sends the message to the queue's dead letters, with a reason. */
  async term(opts: { reason?: string } = {}): Promise<void> {
    let body: Record<string, unknown> | undefined;
    if (opts.reason !== undefined) {
      checkString('reason', opts.reason, { empty: true });
      body = { reason: opts.reason };
    }
    await this.settle('term', body);
  }

  /** extend renews the lease for its time; answers the new deadline. */
  async extend(): Promise<Date> {
    const a = await this.http.request<{ deadline: string }>('POST', `${this.base}/leases/${seg(this.lease)}/extend`);
    this.deadline = new Date(a.body.deadline);
    return this.deadline;
  }

  private async settle(verb: string, body?: unknown): Promise<void> {
    await this.http.request('POST', `${this.base}/leases/${seg(this.lease)}/${verb}`, body);
  }
}

function bytes(b64: unknown): Uint8Array {
  if (typeof b64 !== 'string') return new Uint8Array(0);
  const b = Buffer.from(b64, 'base64');
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}
