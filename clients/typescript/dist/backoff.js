/**
 * The delay before retry number `attempt` (0 for the first retry): exponential growth
 * from `baseMs`, capped at `maxMs`, with "equal jitter" (a random point in the upper
 * half), so many clients that lost the same server do not come back in step.
 */
export function backoffDelay(attempt, options = {}) {
    const base = options.baseMs ?? 250;
    const max = options.maxMs ?? 30_000;
    const random = options.random ?? Math.random;
    const exp = Math.min(max, base * 2 ** Math.min(Math.max(0, attempt), 30));
    const half = exp / 2;
    return Math.round(half + random() * half);
}
//# sourceMappingURL=backoff.js.map