import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { repoRoot, UsageError } from '../args.js';
import { startServe, type ServedStore } from '../http/server.js';
import { Agent, type AskResult } from './agent.js';
import { loadMbpp, type MbppSet } from './data.js';
import { buildMemories, MEMORY_NAMES, newWordingRound, newWordingRounds, repeatRound, type Ask, type MemoryName } from './memories.js';
import { Sandbox } from './sandbox.js';
import { bootstrapDifference, bootstrapRate, formatDifference, formatRate, type Tally } from './stats.js';
import { measureOutcomeCpu, type OutcomeCpu } from './cpu.js';

/**
 * `npm run bench -- --agent-loop`: does outcome-aware recall help an agent? On the MBPP
 * development set (problems with executable tests), a simulated agent learns a memory (clean,
 * contaminated, lookalike absent), then asks every problem in other wordings, round after
 * round, reuses the top match, runs the asked problem's tests in a sandbox and reports the
 * outcome. Two servers answer the same asks, one with outcome ranking and one without
 * (SERVICE_OUTCOME_RANKING=off), so each ask is paired. Prints first-try pass rate, precision@1
 * and the share of wrong `duplicate` answers per round, with 95% bootstrap intervals over
 * problems, and the recall CPU outcome ranking adds (cpu.ts).
 */
export const AGENT_LOOP_USAGE = `usage: npm run bench -- --agent-loop [--data FILE] [--seeds 1,2] [--rounds 4] [--memories S1,S2,S3]
                                     [--streams R,N] [--problems N] [--limit 5] [--model PATH]
                                     [--cpu-patterns 10000] [--cpu-outcomes 10000] [--cpu-queries 300] [--cpu-only]
  --data FILE         the problem set (default ../shared/data/mbpp-dev.json beside the repository)
  --seeds LIST        seeds (memories, ask order, mutants); figures pool them per problem (default 1,2)
  --rounds N          rounds of stream R (every asked wording once per round; default 4); stream N
                      has one round per asked wording (the e-th wording of each problem in round e)
  --memories LIST     S1 (clean), S2 (contaminated), S3 (lookalike absent); default all three
  --streams LIST      R (repeat wordings), N (new wordings); default both
  --problems N        only the first N problems (a quick run; default all)
  --limit N           matches per recall (default 5; the agent reuses the first)
  --model PATH        embedding model folder (default: the bundled models/use-lite-static-m2v)
  --cpu-patterns N    patterns for the recall CPU measurement (default 10000; 0: skip it)
  --cpu-outcomes N    outcomes stored for it (default 10000)
  --cpu-queries N     recalls per arm for it (default 300)
  --cpu-only          only the recall CPU measurement`;

type Stream = 'R' | 'N';
type Arm = 'with' | 'without';
const ARMS: Arm[] = ['with', 'without'];

export interface AgentLoopOptions {
  data: string;
  seeds: number[];
  rounds: number;
  memories: MemoryName[];
  streams: Stream[];
  problems: number | null;
  limit: number;
  model: string;
  cpuPatterns: number;
  cpuOutcomes: number;
  cpuQueries: number;
  cpuOnly: boolean;
}

const positive = (flag: string, v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} needs a positive whole number`);
  return n;
};
const whole = (flag: string, v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${flag} needs a whole number`);
  return n;
};

export function parseAgentLoopArgs(argv: string[]): AgentLoopOptions {
  const root = repoRoot();
  const o: AgentLoopOptions = {
    data: resolve(root, '..', 'shared', 'data', 'mbpp-dev.json'),
    seeds: [1, 2],
    rounds: 4,
    memories: [...MEMORY_NAMES],
    streams: ['R', 'N'],
    problems: null,
    limit: 5,
    model: join(root, 'models', 'use-lite-static-m2v'),
    cpuPatterns: 10_000,
    cpuOutcomes: 10_000,
    cpuQueries: 300,
    cpuOnly: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--agent-loop') continue;
    if (flag === '--cpu-only') {
      o.cpuOnly = true;
      continue;
    }
    if (value === undefined) throw new UsageError(`${flag} needs a value\n${AGENT_LOOP_USAGE}`);
    if (flag === '--data') o.data = resolve(value);
    else if (flag === '--seeds') o.seeds = value.split(',').map((s) => whole('--seeds', s.trim()));
    else if (flag === '--rounds') o.rounds = positive(flag, value);
    else if (flag === '--memories') o.memories = value.split(',').map((m) => oneOf('--memories', m.trim(), MEMORY_NAMES));
    else if (flag === '--streams') o.streams = value.split(',').map((s) => oneOf('--streams', s.trim(), ['R', 'N'] as const));
    else if (flag === '--problems') o.problems = positive(flag, value);
    else if (flag === '--limit') o.limit = positive(flag, value);
    else if (flag === '--model') o.model = resolve(value);
    else if (flag === '--cpu-patterns') o.cpuPatterns = whole(flag, value);
    else if (flag === '--cpu-outcomes') o.cpuOutcomes = whole(flag, value);
    else if (flag === '--cpu-queries') o.cpuQueries = positive(flag, value);
    else throw new UsageError(`unknown option "${flag}"\n${AGENT_LOOP_USAGE}`);
    i++;
  }
  return o;
}

function oneOf<T extends string>(flag: string, v: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(v)) throw new UsageError(`${flag}: "${v}" is not one of ${allowed.join(', ')}`);
  return v as T;
}

/** Per problem, pooled over seeds: passes, right patterns and wrong duplicates out of asks. */
interface ProblemTally {
  pass: Tally;
  right: Tally;
  wrongDuplicate: Tally;
}

/** Tallies of one row (a memory, or a subset of one) by round (stream and number) → arm → problem. */
type Tallies = Map<string, Map<Arm, Map<string, ProblemTally>>>;

class Tables {
  readonly rows = new Map<string, Tallies>();

  add(row: string, stream: Stream, round: number, arm: Arm, problem: string, r: AskResult): void {
    let byStream = this.rows.get(row);
    if (!byStream) this.rows.set(row, (byStream = new Map()));
    const key = `${stream}${round}`;
    let byArm = byStream.get(key);
    if (!byArm) byStream.set(key, (byArm = new Map()));
    let byProblem = byArm.get(arm);
    if (!byProblem) byArm.set(arm, (byProblem = new Map()));
    let t = byProblem.get(problem);
    if (!t) byProblem.set(problem, (t = { pass: { hits: 0, of: 0 }, right: { hits: 0, of: 0 }, wrongDuplicate: { hits: 0, of: 0 } }));
    for (const [tally, hit] of [[t.pass, r.passed], [t.right, r.rightPattern], [t.wrongDuplicate, r.wrongDuplicate]] as const) {
      tally.of++;
      if (hit) tally.hits++;
    }
  }

  render(): string {
    const header = ['memory', 'round', 'asks', 'pass without', 'pass with', 'with − without (points)', 'p@1 without', 'p@1 with', 'wrong dup without', 'wrong dup with'];
    const lines: string[][] = [header];
    for (const [row, byStream] of this.rows) {
      for (const [round, byArm] of byStream) {
        const without = byArm.get('without');
        const withArm = byArm.get('with');
        if (!without || !withArm) continue;
        const problems = [...without.keys()].filter((p) => withArm.has(p));
        const pick = (m: Map<string, ProblemTally>, f: keyof ProblemTally) => problems.map((p) => m.get(p)![f]);
        const share = (m: Map<string, ProblemTally>, f: keyof ProblemTally) => {
          const ts = pick(m, f);
          const of = ts.reduce((s, t) => s + t.of, 0);
          return of === 0 ? '-' : `${((100 * ts.reduce((s, t) => s + t.hits, 0)) / of).toFixed(1)}%`;
        };
        lines.push([
          row, round, String(pick(without, 'pass').reduce((s, t) => s + t.of, 0)),
          formatRate(bootstrapRate(pick(without, 'pass'))), formatRate(bootstrapRate(pick(withArm, 'pass'))),
          formatDifference(bootstrapDifference(pick(withArm, 'pass'), pick(without, 'pass'))),
          share(without, 'right'), share(withArm, 'right'), share(without, 'wrongDuplicate'), share(withArm, 'wrongDuplicate'),
        ]);
      }
    }
    const widths = header.map((_, c) => Math.max(...lines.map((l) => l[c].length)));
    return lines.map((l) => l.map((cell, c) => cell.padEnd(widths[c])).join('  ').trimEnd()).join('\n');
  }
}

/** Rows an ask counts in: its memory, and for S3 whether the problem is a stored partner or a left-out one. */
function rowsOf(memory: MemoryName, problem: string, absent: Set<string>, partners: Set<string>): string[] {
  if (memory !== 'S3') return [memory];
  if (partners.has(problem)) return ['S3', 'S3 partners'];
  if (absent.has(problem)) return ['S3', 'S3 absent'];
  return ['S3'];
}

async function serveArm(arm: Arm, dataDir: string, model: string): Promise<ServedStore> {
  return startServe({
    SERVICE_STORAGE: 'json',
    SERVICE_DATA_PATH: join(dataDir, arm),
    SERVICE_OUTCOME_RANKING: arm === 'with' ? 'on' : 'off',
  }, { modelPath: model, logLevel: 'warn' });
}

async function runStreams(o: AgentLoopOptions, set: MbppSet, sandbox: Sandbox, servers: Record<Arm, ServedStore>, tables: Tables): Promise<number> {
  let reported = 0;
  for (const seed of o.seeds) {
    process.stderr.write(`agent loop: seed ${seed}: building the memories (near-miss mutants run their tests)...\n`);
    const memories = await buildMemories(set, seed, sandbox, o.memories.includes('S2'));
    for (const memory of o.memories) {
      for (const stream of o.streams) {
        const project = `agent-loop-s${seed}-${memory}-${stream}`;
        const agents = Object.fromEntries(ARMS.map((arm) => [arm, new Agent(servers[arm].url, project, sandbox)])) as Record<Arm, Agent>;
        process.stderr.write(`agent loop: seed ${seed}, ${memory}, stream ${stream}: learning ${memories[memory].length} runs...\n`);
        await Promise.all(ARMS.map((arm) => agents[arm].learn(memories[memory])));
        const rounds = stream === 'R' ? o.rounds : newWordingRounds(set);
        for (let round = 1; round <= rounds; round++) {
          const asks: Ask[] = stream === 'R' ? repeatRound(set, seed, round) : newWordingRound(set, seed, round);
          process.stderr.write(`agent loop: seed ${seed}, ${memory}, stream ${stream}, round ${round}: ${asks.length} asks...\n`);
          for (const { problem, wording } of asks) {
            // Both arms answer the same ask at the same time: paired, and the two servers share the load alike.
            const results = await Promise.all(ARMS.map((arm) => agents[arm].ask(problem, wording, o.limit)));
            ARMS.forEach((arm, i) => {
              for (const row of rowsOf(memory, problem.id, memories.absent, memories.partners)) tables.add(row, stream, round, arm, problem.id, results[i]);
            });
          }
        }
        reported += agents.with.outcomesReported;
      }
    }
    // The figures so far, pooled over the seeds done: a long run interrupted still leaves them.
    process.stderr.write(`agent loop: after seed ${seed}:\n${tables.render()}\n`);
  }
  return reported;
}

export async function runAgentLoopBench(argv: string[]): Promise<void> {
  if (argv.includes('--help')) {
    console.log(AGENT_LOOP_USAGE);
    return;
  }
  const o = parseAgentLoopArgs(argv);
  const lines: string[] = [];
  const cpu = cpus();
  lines.push(
    'Agent loop: first-try pass rate of an agent that reuses the top recall match, with and without outcome ranking',
    `node ${process.version}, ${cpu.length} CPU(s) ${cpu[0]?.model ?? ''}; model ${o.model}; JSON storage${o.cpuOnly ? '' : `; data ${o.data}`}`,
  );
  if (!o.cpuOnly) {
    const full = loadMbpp(o.data);
    const set = o.problems === null ? full : subset(full, o.problems);
    const sandbox = new Sandbox();
    const dataDir = await mkdtemp(join(tmpdir(), 'agent-loop-'));
    const servers = {} as Record<Arm, ServedStore>;
    // Interrupted (Ctrl-C, kill): the servers it started go with it.
    const stopOnSignal = (signal: NodeJS.Signals) => {
      void Promise.all(Object.values(servers).map((srv) => srv.stop())).finally(() => process.kill(process.pid, signal));
    };
    process.once('SIGINT', stopOnSignal);
    process.once('SIGTERM', stopOnSignal);
    try {
      for (const arm of ARMS) servers[arm] = await serveArm(arm, dataDir, o.model);
      const tables = new Tables();
      const started = performance.now();
      const reported = await runStreams(o, set, sandbox, servers, tables);
      lines.push(
        `${set.problems.length} problems, seeds ${o.seeds.join(',')}, stream R ${o.rounds} rounds, stream N ${newWordingRounds(set)} rounds; ` +
          `${sandbox.runs} test runs (verdicts cached per code and problem); ${reported} outcomes reported per arm; ` +
          `${((performance.now() - started) / 1000).toFixed(0)} s`,
        'round: R1..Rn repeat every asked wording; N1..Nn ask each problem\'s e-th wording once. Rates pooled over seeds; [95% bootstrap over problems].',
        'S3 partners: the stored side of pairs whose other side is absent; S3 absent: the problems left out (nothing right is stored).',
        '',
        tables.render(),
      );
    } finally {
      process.off('SIGINT', stopOnSignal);
      process.off('SIGTERM', stopOnSignal);
      await Promise.all(Object.values(servers).map((s) => s.stop()));
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  if (o.cpuPatterns > 0) {
    process.stderr.write(`agent loop: recall CPU at ${o.cpuPatterns} patterns and ${o.cpuOutcomes} outcomes...\n`);
    const c: OutcomeCpu = await measureOutcomeCpu(o.model, o.cpuPatterns, o.cpuOutcomes, o.cpuQueries);
    lines.push(
      '',
      `recall CPU per request at ${o.cpuPatterns} patterns, ${o.cpuOutcomes} outcomes (${o.cpuQueries} recalls per arm, interleaved, embeddings cached, in process):`,
      `  ${c.stored} outcomes stored: without outcome ranking ${c.withoutUs.toFixed(0)} µs, with ${c.withUs.toFixed(0)} µs, added ${(c.withUs - c.withoutUs).toFixed(0)} µs per recall`,
      `  no outcome in the project: without ${c.emptyWithoutUs.toFixed(0)} µs, with ${c.emptyWithUs.toFixed(0)} µs, added ${(c.emptyWithUs - c.emptyWithoutUs).toFixed(0)} µs per recall`,
      `  the outcome stage timed alone (a default recall's candidates): ${c.stageUs.toFixed(1)} µs per recall with the outcomes, ${c.emptyStageUs.toFixed(1)} µs with none`,
    );
  }
  console.log(lines.join('\n'));
}

/** The first `n` problems and the hard-negative pairs among them. */
function subset(set: MbppSet, n: number): MbppSet {
  const problems = set.problems.slice(0, n);
  const byId = new Map(problems.map((p) => [p.id, p]));
  return { problems, byId, hardNegatives: set.hardNegatives.filter((h) => byId.has(h.a) && byId.has(h.b)) };
}
