/**
 * @module collections/held-map
 * A Map for entries that come and go once a job (a worker's runs, the attempt log's open
 * attempts): each value sits in a small box that a delete empties before the key leaves
 * the map. V8's table replaced by a rebuild (see held-list.ts) then keeps only the box
 * and the key, not the value and all that it reaches (a job run: its job, its handler's
 * promise, its result), which young collections took for live and promoted until the next
 * full collection.
 */

interface Box<V> {
  value: V | undefined;
}

export class HeldMap<K, V> implements ReadonlyMap<K, V> {
  readonly #boxes = new Map<K, Box<V>>();

  get size(): number {
    return this.#boxes.size;
  }

  get(key: K): V | undefined {
    return this.#boxes.get(key)?.value;
  }

  has(key: K): boolean {
    return this.#boxes.has(key);
  }

  set(key: K, value: V): this {
    const box = this.#boxes.get(key);
    if (box) box.value = value;
    else this.#boxes.set(key, { value });
    return this;
  }

  delete(key: K): boolean {
    const box = this.#boxes.get(key);
    if (!box) return false;
    box.value = undefined;
    return this.#boxes.delete(key);
  }

  clear(): void {
    for (const box of this.#boxes.values()) box.value = undefined;
    this.#boxes.clear();
  }

  *entries(): MapIterator<[K, V]> {
    for (const [key, box] of this.#boxes) yield [key, box.value as V];
  }

  keys(): MapIterator<K> {
    return this.#boxes.keys();
  }

  *values(): MapIterator<V> {
    for (const box of this.#boxes.values()) yield box.value as V;
  }

  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void): void {
    for (const [key, box] of this.#boxes) callback(box.value as V, key, this);
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }
}
