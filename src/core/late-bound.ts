/** A value wired after the closures that read it were built (the session registry and the machine need each other). */
export interface LateBound<T> {
  /** The value; throws when read before `set`. */
  get(): T;
  set(value: T): void;
}

/** Create an empty slot named `name` (the name is in the error of a read before it was set). */
export function lateBound<T>(name: string): LateBound<T> {
  let value: { readonly current: T } | undefined;
  return {
    get() {
      if (value === undefined) throw new Error(`${name} is read before it was wired`);
      return value.current;
    },
    set(next) {
      value = { current: next };
    },
  };
}
