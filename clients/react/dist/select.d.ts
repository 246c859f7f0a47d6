import type { ExternalStore } from 'chatd-client';
/**
 * `select(store.getSnapshot())`, the same value (by identity) for as long as `equal` finds
 * the selected part unchanged. Pass a `select` and `equal` that keep their identity across
 * renders (module functions, or `useCallback`): a new `select` is applied again.
 */
export declare function useStoreSelector<T, S>(store: ExternalStore<T>, select: (snapshot: T) => S, equal: (a: S, b: S) => boolean): S;
/** Same length and the same elements (by identity) in the same order. */
export declare function sameElements<T>(a: readonly T[], b: readonly T[]): boolean;
//# sourceMappingURL=select.d.ts.map