/**
 * How many uploads one client has in progress at once, and how an upload the server refused
 * for the user's uploads in progress is tried again. The server bounds the uploads one user
 * has in progress on a node (`max_uploads_in_flight_per_user`, default 4: past it 429
 * `rate_limited` with `reason` `uploads_in_flight`, before the body is read); a client
 * keeps below it by running at most {@link DEFAULT_MAX_UPLOADS_IN_FLIGHT} (or
 * `ChatClientOptions.maxUploadsInFlight`) and queueing the rest in order, and waits out the
 * slots the user's other tabs and devices hold by trying again after a backoff.
 *
 * @module
 */
import type { BackoffOptions } from './backoff.js';
import { ChatdError } from './errors.js';
/**
 * Uploads one client runs at once by default (`ChatClientOptions.maxUploadsInFlight`): the
 * rest wait in order. Below the server's default `max_uploads_in_flight_per_user` (4), so
 * that one tab alone is not refused and another tab or device of the user has a slot left.
 */
export declare const DEFAULT_MAX_UPLOADS_IN_FLIGHT = 3;
/**
 * How many times an upload refused 429 `rate_limited` with `reason` `uploads_in_flight` is
 * tried again (after {@link DEFAULT_UPLOAD_RETRY_BACKOFF}'s delays: about 30 to 65 s in
 * all) before the call rejects with that error.
 */
export declare const UPLOAD_IN_FLIGHT_RETRIES = 10;
/**
 * Delays before trying again an upload refused for the user's uploads in progress
 * (`ChatClientOptions.uploadRetryBackoff`): 500 ms doubling to 10 s, with jitter.
 */
export declare const DEFAULT_UPLOAD_RETRY_BACKOFF: BackoffOptions;
/** The uploads setting's value: a whole number of at least 1, else the default. */
export declare function maxUploadsInFlight(value: number | undefined): number;
/** Whether `e` is the server's refusal for the user's uploads in progress (tried again). */
export declare function isUploadsInFlight(e: ChatdError): boolean;
/**
 * @internal At most `max` holders at once, the others waiting first come first served. A
 * waiter whose signal aborts leaves the line (rejects `aborted`) and takes no slot.
 */
export declare class UploadSlots {
    private readonly max;
    private running;
    private readonly waiting;
    constructor(max: number);
    /** Slots taken now. */
    get inFlight(): number;
    /** Calls waiting for a slot now. */
    get queued(): number;
    /**
     * Resolves, once a slot is free and every earlier caller had one, to the function that
     * gives it back (once; later calls do nothing). Rejects with `aborted` when `signal`
     * aborts first.
     */
    acquire(signal?: AbortSignal): Promise<() => void>;
    private releaser;
}
/** Waits `ms`; rejects with `aborted` as soon as `signal` aborts. */
export declare function sleep(ms: number, signal?: AbortSignal): Promise<void>;
//# sourceMappingURL=upload-queue.d.ts.map