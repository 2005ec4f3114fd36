import pg from 'pg';
import type { Logger } from '../../../ports/observability.js';

/** The NOTIFY channel an enqueue signals; every worker process LISTENs on it. */
export const JOBS_CHANNEL = 'service_jobs';

/**
 * One dedicated connection LISTENing on the jobs channel, opened on the first subscriber.
 * A lost connection is reopened with backoff; meanwhile workers still poll, so a missed
 * notification only delays a job by one poll interval.
 */
export class JobListener {
  private readonly listeners = new Set<() => void>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryMs = 500;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
  ) {}

  add(fn: () => void): () => void {
    const entry = () => fn();
    this.listeners.add(entry);
    if (!this.client && !this.connecting && !this.retryTimer) this.connect();
    return () => this.listeners.delete(entry);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private connect(): void {
    const client = new pg.Client({ connectionString: this.url, application_name: 'agent-memory-service-jobs' });
    // Without an error listener a dropped socket would crash the process.
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, null));
    client.on('notification', () => {
      for (const fn of this.listeners) fn();
    });
    this.connecting = (async () => {
      try {
        await client.connect();
        await client.query(`LISTEN ${JOBS_CHANNEL}`);
        if (this.closed) {
          await client.end().catch(() => undefined);
          return;
        }
        this.client = client;
        this.retryMs = 500;
        // Jobs enqueued while we were not listening: one wake-up covers them all.
        for (const fn of this.listeners) fn();
      } catch (err) {
        this.lost(client, err as Error);
      } finally {
        this.connecting = null;
      }
    })();
  }

  private lost(client: pg.Client, err: Error | null): void {
    if (this.client === client) this.client = null;
    client.removeAllListeners('notification');
    void client.end().catch(() => undefined);
    if (this.closed || this.retryTimer) return;
    this.logger.warn({ err: err?.message ?? 'connection ended' }, 'job notifications lost; polling until LISTEN is back');
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.closed && !this.client && !this.connecting) this.connect();
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, 30_000);
  }
}
