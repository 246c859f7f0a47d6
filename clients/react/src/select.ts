/**
 * `useSyncExternalStore` over a part of a store's snapshot: the component renders again
 * only when that part changed (by the given equality), not on every change of the store.
 *
 * @module
 */
import { useCallback, useRef, useSyncExternalStore } from 'react';
import type { ExternalStore } from 'chatd-client';

/**
 * `select(store.getSnapshot())`, the same value (by identity) for as long as `equal` finds
 * the selected part unchanged. Pass a `select` and `equal` that keep their identity across
 * renders (module functions, or `useCallback`): a new `select` is applied again.
 */
export function useStoreSelector<T, S>(
  store: ExternalStore<T>,
  select: (snapshot: T) => S,
  equal: (a: S, b: S) => boolean,
): S {
  const memo = useRef<{ source: T; select: (snapshot: T) => S; selected: S } | undefined>(undefined);
  const getSelected = useCallback((): S => {
    const source = store.getSnapshot();
    const m = memo.current;
    if (m?.source === source && m.select === select) return m.selected;
    const next = select(source);
    const selected = m !== undefined && equal(m.selected, next) ? m.selected : next;
    memo.current = { source, select, selected };
    return selected;
  }, [store, select, equal]);
  return useSyncExternalStore(store.subscribe, getSelected, getSelected);
}

/** Same length and the same elements (by identity) in the same order. */
export function sameElements<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
