/** A value source compatible with React's `useSyncExternalStore(subscribe, getSnapshot)`. */
export interface ExternalStore<T> {
    /** Registers a listener called after each change; returns the function that removes it. */
    readonly subscribe: (listener: () => void) => () => void;
    /** The current value: the same object until something changed. */
    readonly getSnapshot: () => T;
}
/** @internal A store whose snapshot is rebuilt lazily after `invalidate()`. */
export declare class LazyStore<T> implements ExternalStore<T> {
    private readonly listeners;
    private value;
    private readonly build;
    private scheduled;
    private readonly onInvalidate;
    /** `onInvalidate` runs on every `invalidate()` (a store derived from this one goes stale too). */
    constructor(build: () => T, onInvalidate?: () => void);
    subscribe: (listener: () => void) => (() => void);
    getSnapshot: () => T;
    /** Marks the snapshot stale and notifies listeners (once per microtask). */
    invalidate(): void;
}
/** A minimal typed event emitter. */
export declare class Emitter<Events extends {
    [K in keyof Events]: (...args: never[]) => void;
}> {
    private readonly handlers;
    /** Adds a handler; returns the function that removes it. */
    on<K extends keyof Events>(event: K, handler: Events[K]): () => void;
    /** @internal Calls every handler of `event`. */
    emit<K extends keyof Events>(event: K, ...args: Parameters<Events[K]>): void;
}
//# sourceMappingURL=store.d.ts.map