/**
 * Writes that arrive while one is in flight go together in the next: one statement for the whole
 * group instead of one each. Alone, an item is written at once (no timer, no added latency); under
 * load the group grows to what arrived during the previous write, at most `maxGroup`.
 *
 * Each caller's promise settles when the statement holding its item has committed (or failed): what
 * the caller does next (count a delivery as recorded, let a Kafka offset move past an event) waits
 * for its own item to be durable.
 */
export class GroupedWrites<T> {
  private queue: { item: T; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private writing = false;

  constructor(
    private readonly write: (group: T[]) => Promise<void>,
    private readonly maxGroup = 256,
  ) {}

  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.writing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.writing = true;
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, this.maxGroup);
        try {
          await this.write(group.map((g) => g.item));
          for (const g of group) g.resolve();
        } catch (err) {
          for (const g of group) g.reject(err);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
