/**
 * Counting semaphore: at most `limit` holders at once, waiters served first come first
 * served. Shared by the adapters: one instance per Llm bounds every LLM call the process makes
 * (SERVICE_LLM_CONCURRENCY); the PostgreSQL storage bounds its scope-lock connections with one.
 */
export class Semaphore {
  private active = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`semaphore limit must be a positive integer, got ${limit}`);
  }

  async acquire(): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return;
    }
    // The releasing holder hands its slot over directly, so `active` never exceeds the limit.
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.active--;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  get inUse(): number {
    return this.active;
  }
}
