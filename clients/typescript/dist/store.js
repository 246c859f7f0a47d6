/** @internal A store whose snapshot is rebuilt lazily after `invalidate()`. */
export class LazyStore {
    listeners = new Set();
    value;
    build;
    scheduled = false;
    onInvalidate;
    /** `onInvalidate` runs on every `invalidate()` (a store derived from this one goes stale too). */
    constructor(build, onInvalidate) {
        this.build = build;
        this.onInvalidate = onInvalidate;
    }
    subscribe = (listener) => {
        this.listeners.add(listener);
        return () => {
            this.listeners.delete(listener);
        };
    };
    getSnapshot = () => {
        this.value ??= this.build();
        return this.value;
    };
    /** Marks the snapshot stale and notifies listeners (once per microtask). */
    invalidate() {
        this.value = undefined;
        this.onInvalidate?.();
        if (this.scheduled)
            return;
        this.scheduled = true;
        queueMicrotask(() => {
            this.scheduled = false;
            for (const l of [...this.listeners])
                l();
        });
    }
}
/** A minimal typed event emitter. */
export class Emitter {
    handlers = new Map();
    /** Adds a handler; returns the function that removes it. */
    on(event, handler) {
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
    emit(event, ...args) {
        const set = this.handlers.get(event);
        if (set === undefined)
            return;
        for (const h of [...set]) {
            try {
                h(...args);
            }
            catch (e) {
                queueMicrotask(() => {
                    throw e;
                });
            }
        }
    }
}
//# sourceMappingURL=store.js.map