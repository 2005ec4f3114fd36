import type { Embedder } from '../../ports/embedder.js';
import type { Storage } from '../../ports/storage.js';
import type { SpanAttributes, Tracer } from '../../ports/tracing.js';

/** An embedder whose calls are `embedding` spans (provider, model, number of texts). */
export function traceEmbedder(embedder: Embedder, tracer: Tracer): Embedder {
  return {
    get info() {
      return embedder.info;
    },
    embed: (texts) => tracer.inSpan('embedding', {
      'embedding.provider': embedder.info.provider, 'embedding.model': embedder.info.model, 'embedding.texts': texts.length,
    }, () => embedder.embed(texts)),
    readiness: embedder.readiness ? () => embedder.readiness!() : undefined,
    close: embedder.close ? () => embedder.close!() : undefined,
  };
}

/**
 * Storage whose repository calls are `storage <repo>.<method>` spans; on PostgreSQL the pg
 * instrumentation's query spans nest under them. Methods returning something other than a
 * promise (a stream) end their span at once. Calls outside any trace (the job queue's
 * polling) make no spans: a root span every poll interval would only be noise.
 */
export function traceStorage(storage: Storage, tracer: Tracer): Storage {
  const traced: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(storage)) {
    if (typeof member === 'function') {
      traced[name] = (...args: unknown[]) => inTrace(tracer, `storage ${name}`, { 'db.system': storage.kind }, () => member.apply(storage, args));
    } else if (member && typeof member === 'object') {
      traced[name] = traceRepository(name, member as Record<string, unknown>, storage.kind, tracer);
    } else {
      traced[name] = member;
    }
  }
  return traced as unknown as Storage;
}

function inTrace<T>(tracer: Tracer, name: string, attributes: SpanAttributes, fn: () => T): T {
  return tracer.currentTraceId() === null ? fn() : tracer.inSpan(name, attributes, fn);
}

function traceRepository(repoName: string, repo: Record<string, unknown>, kind: string, tracer: Tracer): Record<string, unknown> {
  // Repositories may be class instances: their methods live on the prototype chain.
  const names = new Set<string>();
  for (let o: object | null = repo; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const key of Object.getOwnPropertyNames(o)) if (key !== 'constructor') names.add(key);
  }
  const traced: Record<string, unknown> = {};
  for (const name of names) {
    const member = repo[name];
    traced[name] = typeof member === 'function'
      ? (...args: unknown[]) => inTrace(tracer, `storage ${repoName}.${name}`, { 'db.system': kind, 'db.operation': `${repoName}.${name}` }, () => member.apply(repo, args))
      : member;
  }
  return traced;
}
