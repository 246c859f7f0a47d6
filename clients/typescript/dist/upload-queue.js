import { ChatdError } from './errors.js';
/**
 * Uploads one client runs at once by default (`ChatClientOptions.maxUploadsInFlight`): the
 * rest wait in order. Below the server's default `max_uploads_in_flight_per_user` (4), so
 * that one tab alone is not refused and another tab or device of the user has a slot left.
 */
export const DEFAULT_MAX_UPLOADS_IN_FLIGHT = 3;
/**
 * How many times an upload refused 429 `rate_limited` with `reason` `uploads_in_flight` is
 * tried again (after {@link DEFAULT_UPLOAD_RETRY_BACKOFF}'s delays: about 30 to 65 s in
 * all) before the call rejects with that error.
 */
export const UPLOAD_IN_FLIGHT_RETRIES = 10;
/**
 * Delays before trying again an upload refused for the user's uploads in progress
 * (`ChatClientOptions.uploadRetryBackoff`): 500 ms doubling to 10 s, with jitter.
 */
export const DEFAULT_UPLOAD_RETRY_BACKOFF = { baseMs: 500, maxMs: 10_000 };
/** The uploads setting's value: a whole number of at least 1, else the default. */
export function maxUploadsInFlight(value) {
    return value !== undefined && Number.isInteger(value) && value >= 1 ? value : DEFAULT_MAX_UPLOADS_IN_FLIGHT;
}
/** Whether `e` is the server's refusal for the user's uploads in progress (tried again). */
export function isUploadsInFlight(e) {
    return e.code === 'rate_limited' && e.reason === 'uploads_in_flight';
}
/**
 * @internal At most `max` holders at once, the others waiting first come first served. A
 * waiter whose signal aborts leaves the line (rejects `aborted`) and takes no slot.
 */
export class UploadSlots {
    max;
    running = 0;
    waiting = [];
    constructor(max) {
        this.max = max;
    }
    /** Slots taken now. */
    get inFlight() {
        return this.running;
    }
    /** Calls waiting for a slot now. */
    get queued() {
        return this.waiting.length;
    }
    /**
     * Resolves, once a slot is free and every earlier caller had one, to the function that
     * gives it back (once; later calls do nothing). Rejects with `aborted` when `signal`
     * aborts first.
     */
    acquire(signal) {
        if (signal?.aborted === true)
            return Promise.reject(new ChatdError('aborted', 'aborted'));
        if (this.running < this.max && this.waiting.length === 0) {
            this.running++;
            return Promise.resolve(this.releaser());
        }
        return new Promise((resolve, reject) => {
            const onAbort = () => {
                const i = this.waiting.indexOf(waiter);
                if (i < 0)
                    return;
                this.waiting.splice(i, 1);
                reject(new ChatdError('aborted', 'aborted'));
            };
            const waiter = {
                start: () => {
                    signal?.removeEventListener('abort', onAbort);
                    this.running++;
                    resolve(this.releaser());
                },
            };
            signal?.addEventListener('abort', onAbort, { once: true });
            this.waiting.push(waiter);
        });
    }
    releaser() {
        let given = false;
        return () => {
            if (given)
                return;
            given = true;
            this.running--;
            while (this.running < this.max) {
                const next = this.waiting.shift();
                if (next === undefined)
                    return;
                next.start();
            }
        };
    }
}
/** Waits `ms`; rejects with `aborted` as soon as `signal` aborts. */
export function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
        if (signal?.aborted === true) {
            reject(new ChatdError('aborted', 'aborted'));
            return;
        }
        const onAbort = () => {
            clearTimeout(timer);
            reject(new ChatdError('aborted', 'aborted'));
        };
        const timer = setTimeout(() => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
        }, ms);
        signal?.addEventListener('abort', onAbort, { once: true });
    });
}
//# sourceMappingURL=upload-queue.js.map