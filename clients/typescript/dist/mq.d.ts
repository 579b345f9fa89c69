import { Transport, type ConnectionOptions } from './http.js';
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
export declare class MessageQueue {
    readonly queue: string;
    private readonly http;
    private readonly worker;
    private readonly group;
    private readonly leaseSeconds;
    constructor(queue: string, opts?: MessageQueueOptions);
    private get base();
    /**
     * put puts a message (bytes, or a string sent as UTF-8) on topic. It answers
     * published: false, publishing nothing, while a message of the same key is live.
     */
    put(topic: string, data: Uint8Array | string, opts?: PutOptions): Promise<{
        published: boolean;
    }>;
    /** receive leases up to max messages of topics, waiting up to waitSeconds for a first one. */
    receive(opts: ReceiveOptions): Promise<Message[]>;
    /** topic answers a topic's counts for a group (default: the queue's default group). */
    topic(topic: string, opts?: {
        group?: string;
    }): Promise<TopicStats>;
    /** dead lists the queue's dead letters, newest first. */
    dead(opts?: {
        limit?: number;
    }): Promise<DeadMessage[]>;
    /** close ends the idle connections. */
    close(): void;
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
export declare class Message {
    private readonly http;
    private readonly base;
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
    constructor(http: Transport, base: string, m: WireMessage);
    /** text decodes the body as UTF-8. */
    text(): string;
    /** json parses the body as JSON. */
    json<T = unknown>(): T;
    /** ack settles the message as done. LeaseLostError: it is no longer yours (nothing changed). */
    ack(): Promise<void>;
    /** release gives the message back at once, to topic (default its own), without counting a failure. */
    release(topic?: string, opts?: {
        maxSize?: number;
    }): Promise<void>;
    /** nak gives the message back for another delivery, after delaySeconds. */
    nak(opts?: {
        delaySeconds?: number;
    }): Promise<void>;
    /** term sends the message to the queue's dead letters, with a reason. */
    term(opts?: {
        reason?: string;
    }): Promise<void>;
    /** extend renews the lease for its time; answers the new deadline. */
    extend(): Promise<Date>;
    private settle;
}
export {};
