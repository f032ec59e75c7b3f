/**
 * A min-heap of items ordered by the time they fall due (ties in insertion order), for the local QStash
 * scheduler: push in O(log n), peek the earliest in O(1), pop it in O(log n).
 *
 * @example
 * const queue = new DueQueue<string>();
 * queue.push(Date.now() + 500, "later");
 * queue.push(Date.now(), "now");
 * queue.peekDue(); // the time "now" falls due
 * queue.pop(); // "now"
 */
type Entry<T> = { due: number; seq: number; item: T };

export class DueQueue<T> {
  private heap: Entry<T>[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(due: number, item: T): void {
    this.heap.push({ due, seq: this.seq++, item });
    let i = this.heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** When the earliest item falls due, or undefined when empty. */
  peekDue(): number | undefined {
    return this.heap[0]?.due;
  }

  pop(): T | undefined {
    const top = this.heap[0];
    const last = this.heap.pop();
    if (!top || !last) return undefined;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let smallest = i;
        if (left < this.heap.length && this.less(left, smallest)) smallest = left;
        if (right < this.heap.length && this.less(right, smallest)) smallest = right;
        if (smallest === i) break;
        this.swap(i, smallest);
        i = smallest;
      }
    }
    return top.item;
  }

  private less(a: number, b: number): boolean {
    const x = this.heap[a];
    const y = this.heap[b];
    if (!x || !y) return false;
    return x.due < y.due || (x.due === y.due && x.seq < y.seq);
  }

  private swap(a: number, b: number): void {
    const x = this.heap[a];
    const y = this.heap[b];
    if (!x || !y) return;
    this.heap[a] = y;
    this.heap[b] = x;
  }
}
