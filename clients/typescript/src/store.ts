/** A value source compatible with React's `useSyncExternalStore(subscribe, getSnapshot)`. */
export interface ExternalStore<T> {
  /** Registers a listener called after each change; returns the function that removes it. */
  readonly subscribe: (listener: () => void) => () => void;
  /** The current value: the same object until something changed. */
  readonly getSnapshot: () => T;
}

/** @internal A store whose snapshot is rebuilt lazily after `invalidate()`. */
export class LazyStore<T> implements ExternalStore<T> {
  private readonly listeners = new Set<() => void>();
  private value: T | undefined;
  private readonly build: () => T;
  private scheduled = false;
  private readonly onInvalidate: (() => void) | undefined;

  /** `onInvalidate` runs on every `invalidate()` (a store derived from this one goes stale too). */
  constructor(build: () => T, onInvalidate?: () => void) {
    this.build = build;
    this.onInvalidate = onInvalidate;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  getSnapshot = (): T => {
    this.value ??= this.build();
    return this.value;
  };

  /** Marks the snapshot stale and notifies listeners (once per microtask). */
  invalidate(): void {
    this.value = undefined;
    this.onInvalidate?.();
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      for (const l of [...this.listeners]) l();
    });
  }
}

/** A minimal typed event emitter. */
export class Emitter<Events extends { [K in keyof Events]: (...args: never[]) => void }> {
  private readonly handlers = new Map<keyof Events, Set<Events[keyof Events]>>();

  /** Adds a handler; returns the function that removes it. */
  on<K extends keyof Events>(event: K, handler: Events[K]): () => void {
    let set = this.handlers.get(event);
    if (set === undefined) {
      set = new Set();
      this.handlers.set(event, set);
    }
    set.add(handler);
    return () => {
      set.delete(handler);
    };
  }

  /** @internal Calls every handler of `event`. */
  emit<K extends keyof Events>(event: K, ...args: Parameters<Events[K]>): void {
    const set = this.handlers.get(event);
    if (set === undefined) return;
    for (const h of [...set]) {
      try {
        (h as (...a: Parameters<Events[K]>) => void)(...args);
      } catch (e) {
        queueMicrotask(() => {
          throw e;
        });
      }
    }
  }
}
