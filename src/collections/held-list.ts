/**
 * @module collections/held-list
 * The entries a busy process adds and removes once a request or a job (the local API's request
 * signals, a job's end listeners, the takes parked on a signal and under way; a worker's posts
 * to its supervisor), in a linked list: no hash table to rebuild. V8 rebuilds a Set's or a
 * Map's table as entries come and go (a delete that leaves it a quarter full, an add that
 * finds it full of deleted slots), makes the new table in old space when the old one lives
 * there, and the table it replaced still points at the entries it held until the next full
 * collection: each young generation collection took those entries, and the requests they
 * reach, for live and promoted them
 * (bench/README, "Issue 46: the tables of the sets a request passes through"). An entry
 * removed here lets go of its value at once.
 */

interface Entry<T> {
  value: T | undefined;
  previous: Entry<T> | undefined;
  next: Entry<T> | undefined;
  /** False once removed: its handle does nothing more. */
  held: boolean;
}

export class HeldList<T> {
  #first: Entry<T> | undefined;
  #last: Entry<T> | undefined;
  #size = 0;

  /** Add `value` (last); answers the function that removes this entry (again: nothing). */
  add(value: T): () => void {
    const entry: Entry<T> = { value, previous: this.#last, next: undefined, held: true };
    if (this.#last) this.#last.next = entry;
    else this.#first = entry;
    this.#last = entry;
    this.#size++;
    return () => this.#remove(entry);
  }

  get size(): number {
    return this.#size;
  }

  /** The values held now, first added first (a copy: a value's call may add or remove). */
  values(): T[] {
    const values: T[] = [];
    for (let entry = this.#first; entry; entry = entry.next) values.push(entry.value as T);
    return values;
  }

  /** Remove every entry; answers their values, first added first. */
  clear(): T[] {
    const values = this.values();
    while (this.#first) this.#remove(this.#first);
    return values;
  }

  #remove(entry: Entry<T>): void {
    if (!entry.held) return;
    entry.held = false;
    if (entry.previous) entry.previous.next = entry.next;
    else this.#first = entry.next;
    if (entry.next) entry.next.previous = entry.previous;
    else this.#last = entry.previous;
    entry.value = undefined;
    entry.previous = undefined;
    entry.next = undefined;
    this.#size--;
  }
}
