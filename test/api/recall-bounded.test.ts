/**
 * Issue 25 row 3: a deduplicated recall over 10,000 near-identical patterns does bounded work.
 * Each candidate is compared with the kept matches only (at most one per family here), the
 * widening stops at a fixed cap, and the answers are right: pairwise not near-duplicates, one
 * per family, consistent across pages. The work is asserted structurally (Jaccard comparisons
 * and candidates fetched, counted), never by time; a health check sent alongside is answered.
 * And no request holds the event loop long: the per-candidate work done between two turns of
 * the loop (observed by a setImmediate ticker) is counted and bounded, whatever the page.
 * Both storages (PostgreSQL when it is reachable).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FAMILIES, FAMILY_TASKS, seedNearDuplicates } from '../../bench/near-duplicates.js';
import { firstFetch, MAX_DEDUP_PAGE_END, MAX_WIDENED_CANDIDATES } from '../../src/core/dedup.js';
import { WORK_PER_TURN } from '../../src/core/slices.js';
import { tokenJaccard } from '../../src/core/text.js';
import { fitProject } from '../../src/services/tier-policy.js';
import { requirePostgres } from '../support/pg.js';
import { jsonHarness, pgHarness, type Harness } from './both-storages.js';
import { perFileDatabase } from './db-auth-helpers.js';

// Every task comparison of the process is counted: Jaccard computations (how dedup compared
// before) and the comparisons of NearDuplicateFilter. Past a generous bound a comparison throws,
// so unbounded work fails fast instead of hanging.
//
// Work per turn of the event loop: `turn.work` adds up per-candidate steps of every recall stage
// (a storage's candidate rows: a dot product (JSON) or a timestamp read (PostgreSQL); the JSON
// vector index's kernel calls, rows scored and rows kept; a BM25 of a task; a token set; a task
// comparison; and every element of every array sorted) and is reset
// by a setImmediate ticker once per turn, so `turn.max` is the most work done without the loop
// getting a turn in between.
const { count, tally, turn, step, counted } = vi.hoisted(() => {
  const count = { jaccard: 0, ceiling: Number.POSITIVE_INFINITY };
  const turn = { work: 0, max: 0, total: 0 };
  const step = (n: number) => {
    turn.work += n;
    turn.total += n;
    if (turn.work > turn.max) turn.max = turn.work;
  };
  const tally = (n: number) => {
    count.jaccard += n;
    step(n);
    if (count.jaccard > count.ceiling) throw new Error(`more than ${count.ceiling} task comparisons in one recall`);
  };
  /** `fn`, each call counted as one step of work. */
  const counted = <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A): R => {
    step(1);
    return fn(...args);
  };
  return { count, tally, turn, step, counted };
});
vi.mock('../../src/core/text.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/core/text.js')>();
  return {
    ...real,
    jaccardOfSets: (a: ReadonlySet<string>, b: ReadonlySet<string>) => {
      tally(1);
      return real.jaccardOfSets(a, b);
    },
    tokenSet: counted(real.tokenSet),
  };
});
vi.mock('../../src/core/bm25.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/core/bm25.js')>();
  return { ...real, bm25OfText: counted(real.bm25OfText) };
});
vi.mock('../../src/core/hybrid.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/core/hybrid.js')>();
  return { ...real, dot: counted(real.dot) };
});
// The JSON vector index's selection: each kernel call (one per block of rows scanned, or per
// candidate re-scored) is a step, plus a step per ROWS_PER_STEP rows it scores (a row's dot
// product is a small fraction of a candidate's work at a stage: about 0.1 µs as int8, 0.03 µs
// per float dimension group), and each row kept among the best (filter + heap) is a step.
const ROWS_PER_STEP = 32;
vi.mock('../../src/adapters/storage/json/engine/dot-kernel.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/adapters/storage/json/engine/dot-kernel.js')>();
  type Dots = ReturnType<typeof real.createDots>;
  const countedDots = (dots: Dots): Dots => (q, m, n, strideBytes, out) => {
    step(1 + n / ROWS_PER_STEP);
    dots(q, m, n, strideBytes, out);
  };
  return {
    ...real,
    createDots: (...args: Parameters<typeof real.createDots>) => countedDots(real.createDots(...args)),
  };
});
vi.mock('../../src/adapters/storage/json/engine/int8-kernel.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/adapters/storage/json/engine/int8-kernel.js')>();
  type Int8Dots = ReturnType<typeof real.createInt8Dots>['dots']; // the float kernel's, plus row scales and sums
  const countedInt8Dots = (dots: Int8Dots): Int8Dots => (q, m, n, strideBytes, out, scales, sums) => {
    step(1 + n / ROWS_PER_STEP);
    dots(q, m, n, strideBytes, out, scales, sums);
  };
  return {
    ...real,
    createInt8Dots: (...args: Parameters<typeof real.createInt8Dots>) => {
      const kernel = real.createInt8Dots(...args);
      return { ...kernel, dots: countedInt8Dots(kernel.dots) };
    },
  };
});
vi.mock('../../src/adapters/storage/json/engine/top-rows.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/adapters/storage/json/engine/top-rows.js')>();
  return {
    ...real,
    TopRows: class<T> extends real.TopRows<T> {
      override offer(score: number, id: string, item: T, seq: number): boolean {
        step(1);
        return super.offer(score, id, item, seq);
      }
    },
  };
});
vi.mock('../../src/adapters/storage/postgres/rows.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/adapters/storage/postgres/rows.js')>();
  return { ...real, iso: counted(real.iso) };
});

/**
 * Counts while `body` runs: every element sorted joins the current turn's work, and a ticker
 * resets the count at each turn of the event loop. Resolves to the most work of one turn.
 */
async function maxWorkPerTurn(body: () => Promise<void>): Promise<number> {
  const sort = Array.prototype.sort;
  let ticking = true;
  const tick = () => {
    turn.work = 0;
    if (ticking) setImmediate(tick);
  };
  turn.work = 0;
  turn.max = 0;
  turn.total = 0;
  Array.prototype.sort = function <T>(this: T[], compare?: (a: T, b: T) => number) {
    step(this.length);
    return sort.call(this, compare) as T[];
  };
  setImmediate(tick);
  try {
    await body();
  } finally {
    ticking = false;
    Array.prototype.sort = sort;
  }
  return turn.max;
}

/**
 * The most per-candidate work allowed between two turns of the loop: a few slices of
 * WORK_PER_TURN (a turn may run one slice in its poll phase and one in its check phase, and the
 * storage's and the service's slices are counted apart) — a few milliseconds. Without slicing,
 * a deep page blends, sorts and compares all 10,000 candidates in one stretch.
 */
const MAX_WORK_PER_TURN = 4 * WORK_PER_TURN;
vi.mock('../../src/core/dedup.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/core/dedup.js')>();
  const Filter = real.NearDuplicateFilter;
  if (!Filter) return real;
  return {
    ...real,
    NearDuplicateFilter: class<T> extends Filter<T> {
      override offer(item: T): boolean {
        const before = this.comparisons;
        const kept = super.offer(item);
        tally(this.comparisons - before);
        return kept;
      }
    },
  };
});

const PATTERNS = 10_000;
const SCOPE = { tenant_id: 'default', project_id: 'default' };
const QUERY = `${FAMILY_TASKS[0]} variant 123456`;

const hasPg = await requirePostgres('bounded recall on PostgreSQL');
const database = perFileDatabase('recallbounded');
afterAll(async () => {
  await database.drop();
});
const HARNESSES: [string, () => Promise<Harness>][] = [['json', () => jsonHarness()]];
if (hasPg) HARNESSES.push(['postgres', () => pgHarness(database)]);

interface Match { pattern_key: string; score: number; pattern: { task: string } }
interface Answer { matches: Match[]; has_more: boolean; next_offset: number | null }

describe.each(HARNESSES)('deduplicated recall over 10,000 near-identical patterns (%s)', (name, start) => {
  let t: Harness;
  /**
   * k of every storage search for candidates during the current recall (hybrid: the larger of
   * its vector and keyword sides), and the candidates those searches returned.
   */
  let fetches: number[] = [];
  let fetched = 0;

  beforeAll(async () => {
    t = await start();
    await seedNearDuplicates(t.app.deps.storage, t.app.deps.embedder, SCOPE, PATTERNS);
    // The project's tier-policy fit runs on its first recall (its own small searches) and is
    // then kept until the project's size moves: fitted here, so the recalls measured below
    // fetch only their own candidates.
    expect((await t.call('POST', '/v1/recall', { task: QUERY, readonly: true })).statusCode).toBe(200);
    // Counted where the storage is asked, whichever search recall uses: hybrid ranking (the
    // default) or cosine alone (SERVICE_RECALL_RANKING=cosine).
    const patterns = t.app.deps.storage.patterns;
    const hybrid = patterns.hybridCandidates.bind(patterns);
    patterns.hybridCandidates = async (scope, query) => {
      fetches.push(Math.max(query.vectorK, query.keywordK));
      const found = await hybrid(scope, query);
      fetched += found.candidates.length;
      return found;
    };
    const search = patterns.search.bind(patterns);
    patterns.search = async (...args) => {
      fetches.push(args[2]);
      const found = await search(...args);
      fetched += found.length;
      return found;
    };
  }, 300_000); // seeding 10,000 rows (PostgreSQL: with its vector index) on a busy machine
  afterAll(async () => {
    await t?.close();
  });

  /** One recall with a health check sent alongside; returns the answer and the work it did. */
  async function recall(body: Record<string, unknown>) {
    fetches = [];
    fetched = 0;
    count.jaccard = 0;
    // Each candidate against at most one kept match per family: a ceiling ~FAMILIES × the scope.
    count.ceiling = (FAMILIES + 1) * PATTERNS * 2;
    let res!: Awaited<ReturnType<Harness['call']>>;
    let health!: Awaited<ReturnType<Harness['call']>>;
    const perTurn = await maxWorkPerTurn(async () => {
      [res, health] = await Promise.all([
        t.call('POST', '/v1/recall', { task: QUERY, readonly: true, ...body }),
        t.call('GET', '/v1/health'),
      ]);
    });
    count.ceiling = Number.POSITIVE_INFINITY;
    expect(res.statusCode, res.body).toBe(200);
    expect(health.statusCode).toBe(200);
    // The counting above must have seen this recall's searches, or every bound below is empty.
    expect(fetches.length).toBeGreaterThan(0);
    // The loop got a turn every few milliseconds' work, whatever the page.
    expect(perTurn).toBeGreaterThan(0);
    expect(perTurn).toBeLessThanOrEqual(MAX_WORK_PER_TURN);
    return { answer: res.json() as Answer, comparisons: count.jaccard, fetches: [...fetches], fetched, perTurn, work: turn.total };
  }

  const familyOfTask = (task: string) => FAMILY_TASKS.findIndex((f) => task.startsWith(`${f} variant `));
  const expectDistinct = (matches: Match[]) => {
    for (const [i, a] of matches.entries()) {
      for (const b of matches.slice(i + 1)) expect(tokenJaccard(a.pattern.task, b.pattern.task)).toBeLessThanOrEqual(0.7);
    }
    const families = matches.map((m) => familyOfTask(m.pattern.task));
    expect(families.every((f) => f >= 0)).toBe(true);
    expect(new Set(families).size).toBe(matches.length);
    const scores = matches.map((m) => m.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  };

  it('limit 5: five families, and comparisons bounded by candidates × kept', async () => {
    const { answer, comparisons, fetches: ks, fetched: n } = await recall({ limit: 5 });
    expect(answer.matches).toHaveLength(5);
    expect(answer.has_more).toBe(true);
    expectDistinct(answer.matches);
    // Each candidate meets at most the 6 survivors dedup looks for (the page plus one).
    expect(comparisons).toBeLessThanOrEqual(n * 6);
    expect(Math.max(...ks)).toBeLessThanOrEqual(MAX_WIDENED_CANDIDATES);
  });

  it('limit 50: every family once; widening stopped at the cap, not at the whole scope', async () => {
    const { answer, comparisons, fetches: ks, fetched: n } = await recall({ limit: 50 });
    expect(answer.matches).toHaveLength(FAMILIES);
    expect(answer).toMatchObject({ has_more: false, next_offset: null });
    expectDistinct(answer.matches);
    expect(ks[ks.length - 1]).toBe(MAX_WIDENED_CANDIDATES);
    expect(n).toBeLessThan(PATTERNS);
    expect(comparisons).toBeLessThanOrEqual(n * FAMILIES);

    // A later page is the same ranking's slice.
    const { answer: page } = await recall({ limit: 5, offset: 20 });
    expect(page.matches.map((m) => m.pattern_key)).toEqual(answer.matches.slice(20, 25).map((m) => m.pattern_key));
  });

  it('the deepest deduplicated page fetches once and compares each candidate with the kept families only', async () => {
    // Deduplicated pages end at MAX_DEDUP_PAGE_END (deeper ones are 422: recall-dedup-depth.test.ts).
    const { answer, comparisons, fetches: ks, fetched: n, perTurn, work } = await recall({ limit: 50, offset: MAX_DEDUP_PAGE_END - 50 });
    expect(answer).toMatchObject({ matches: [], has_more: false, next_offset: null });
    // The first fetch for the page is past the widening cap: no widening.
    expect(ks).toEqual([firstFetch(MAX_DEDUP_PAGE_END)]);
    expect(n).toBe(firstFetch(MAX_DEDUP_PAGE_END));
    expect(comparisons).toBeLessThanOrEqual(n * FAMILIES);
    // Work for every candidate at several stages, yet never more than a few slices of it per turn.
    expect(work).toBeGreaterThan(3 * n);
    expect(perTurn).toBeLessThanOrEqual(MAX_WORK_PER_TURN);
  });

  it("fitting the project's tier policy (its sample of the project, then its searches) hands the loop back too", async () => {
    // What a project's first recall awaits (beforeAll's recall did it unmeasured): sampling
    // 100 of the 10,000 patterns in id order, then a neighbour search for each.
    let fit!: Awaited<ReturnType<typeof fitProject>>;
    const perTurn = await maxWorkPerTurn(async () => {
      fit = await fitProject(t.app.deps, SCOPE, PATTERNS);
    });
    expect(fit.sampled).toBe(100);
    expect(fit.threshold).not.toBeNull();
    // On JSON the process orders the 10,000 ids and each search scans the 10,000 rows (on
    // PostgreSQL the database does).
    if (name === 'json') expect(turn.total).toBeGreaterThan(PATTERNS);
    expect(perTurn).toBeGreaterThan(0);
    expect(perTurn).toBeLessThanOrEqual(MAX_WORK_PER_TURN);
  });

  it('without dedup the same scope pages through near-duplicates as they rank', async () => {
    const { answer, comparisons } = await recall({ limit: 50, deduplicate: false });
    expect(answer.matches).toHaveLength(50);
    expect(answer.has_more).toBe(true);
    expect(comparisons).toBe(0);
  });
});
