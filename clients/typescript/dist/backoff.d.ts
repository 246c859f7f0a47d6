/** Settings of exponential backoff. */
export interface BackoffOptions {
    /** First delay, before jitter (default 250 ms). */
    readonly baseMs?: number;
    /** Cap on the delay (default 30 000 ms). */
    readonly maxMs?: number;
    /** Random source in [0, 1) (default Math.random). */
    readonly random?: () => number;
}
/**
 * The delay before retry number `attempt` (0 for the first retry): exponential growth
 * from `baseMs`, capped at `maxMs`, with "equal jitter" (a random point in the upper
 * half), so many clients that lost the same server do not come back in step.
 */
export declare function backoffDelay(attempt: number, options?: BackoffOptions): number;
//# sourceMappingURL=backoff.d.ts.map