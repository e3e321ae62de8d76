// Offset progress: which messages are done, and the offset commits of the done prefix.

/**
 * Which of a partition's messages are done, and committing the offset of the longest done prefix:
 * at most one commit at a time, each covering everything done by the time it starts (so many quick
 * messages share one commit), together with the ids to record as processed. The offsets are those
 * of one batch (ordered consumers), or appended as they are dispatched, batch after batch
 * (`inFlight` consumers: a batch is left once its messages are under way, not done).
 */
export class OffsetProgress {
  private readonly offsets: string[];
  private readonly done_ = new Set<string>();
  private prefix = 0;
  private unrecorded: string[] = [];
  private committed: string | undefined;
  private wanted: string | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly write: (offset: string, ids: string[]) => Promise<void>,
    offsets: readonly string[] = [],
  ) {
    this.offsets = [...offsets];
  }

  /** A message dispatched after the ones before it (offsets ascending). */
  add(offset: string): void {
    this.offsets.push(offset);
  }

  done(offset: string, unrecordedId: string | undefined): void {
    this.done_.add(offset);
    if (unrecordedId !== undefined) this.unrecorded.push(unrecordedId);
    while (this.prefix < this.offsets.length && this.done_.has(this.offsets[this.prefix]!)) {
      this.wanted = this.offsets[this.prefix]!;
      this.done_.delete(this.wanted);
      this.prefix++;
    }
    // A partition's flow lives as long as its assignment: what the prefix passed is dropped.
    if (this.prefix > 1024) {
      this.offsets.splice(0, this.prefix);
      this.prefix = 0;
    }
  }

  /** Commit what is done; resolves when a commit covering it (or a later one) went through. */
  commit(): Promise<void> {
    if (this.running) return this.running;
    if (this.wanted === undefined || this.wanted === this.committed) return Promise.resolve();
    // Started a turn later, so that `running` is set before any write (a write that calls back here joins this loop).
    this.running = Promise.resolve().then(() => this.loop());
    return this.running;
  }

  /**
   * Writes until nothing done is left uncommitted. `running` is cleared in the same turn as the
   * last check: a message done after it starts a new loop, never waits on one that already ended.
   */
  private async loop(): Promise<void> {
    try {
      while (this.wanted !== undefined && this.wanted !== this.committed) {
        const offset = this.wanted;
        const ids = this.unrecorded;
        this.unrecorded = [];
        try {
          await this.write(offset, ids);
        } catch (err) {
          this.unrecorded.push(...ids);
          throw err;
        }
        this.committed = offset;
      }
    } finally {
      this.running = undefined;
    }
  }
}
