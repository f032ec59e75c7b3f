/**
 * A bounded map that forgets the least recently used entry first: what a process may remember about
 * many keys (e.g. orders in a final status) without growing with them.
 *
 * @example
 * const known = createLru<string>(5_000);
 * known.set("a", "1");
 * known.get("a"); // "1", and "a" is now the most recently used
 */
export type Lru<V> = {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  readonly size: number;
};

export function createLru<V>(maxEntries: number): Lru<V> {
  const entries = new Map<string, V>();
  return {
    get(key) {
      const value = entries.get(key);
      if (value === undefined) return undefined;
      entries.delete(key);
      entries.set(key, value);
      return value;
    },
    set(key, value) {
      entries.delete(key);
      entries.set(key, value);
      while (entries.size > maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done) break;
        entries.delete(oldest.value);
      }
    },
    get size() {
      return entries.size;
    },
  };
}
