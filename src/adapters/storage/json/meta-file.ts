import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { EmbeddingInfo } from '../../../core/types.js';
import { atomicWriteFile } from './durable/fs-durable.js';

export const META_FILE = 'meta.json';

interface MetaDoc {
  version: 1;
  embedding: EmbeddingInfo | null;
}

/** Store-wide settings in one small JSON file, always replaced atomically. */
export class MetaFile {
  private doc: MetaDoc = { version: 1, embedding: null };
  private writing: Promise<unknown> = Promise.resolve();
  private readonly file: string;

  constructor(dataPath: string) {
    this.file = path.join(dataPath, META_FILE);
  }

  async load(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    try {
      const doc = JSON.parse(text) as Partial<MetaDoc>;
      this.doc = { version: 1, embedding: doc.embedding ?? null };
    } catch (err) {
      throw new Error(`corrupt JSON storage file ${this.file}: ${(err as Error).message}`);
    }
  }

  get embedding(): EmbeddingInfo | null {
    return this.doc.embedding ? { ...this.doc.embedding } : null;
  }

  /** Writes are chained so two concurrent calls land in call order. */
  setEmbedding(info: EmbeddingInfo): Promise<void> {
    const next: MetaDoc = { version: 1, embedding: { provider: info.provider, model: info.model, dimension: info.dimension } };
    const run = this.writing.catch(() => undefined).then(async () => {
      await atomicWriteFile(this.file, [`${JSON.stringify(next, null, 2)}\n`]);
      this.doc = next;
    });
    this.writing = run;
    return run;
  }

  async close(): Promise<void> {
    await this.writing.catch(() => undefined);
  }
}
