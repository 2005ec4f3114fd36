/**
 * The judge cache measured (docs/performance.md "Judge cache"): `service evaluate --batch` of
 * 100 unchanged cases, 3 evaluators each, against a real `service serve` whose provider is the
 * fake OpenAI-compatible server of the tests (real SDK, real HTTP, each reply delayed by
 * REPLY_MS to stand in for a provider's latency). Three runs: cold (every case judged), warm
 * (the same batch again: served from the cache) and warm with --no-cache. Prints the provider
 * calls and wall time of each. Needs a build: `npm run build`, then
 *   node --import ./scripts/ts-source-loader.mjs scripts/judge-cache-bench.ts
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { reply, startFakeLlm } from '../test/fixtures/fake-llm/server.js';
import { runCli } from '../test/support/cli.js';
import { tempDir } from '../test/support/env.js';
import { startServer } from '../test/support/server.js';

const CASES = 100;
const EVALUATORS = 3;
const REPLY_MS = Number(process.env.REPLY_MS ?? 300);

const fake = await startFakeLlm();
const dir = await tempDir('svc-judge-bench-');
const server = await startServer({
  dataPath: join(dir.path, 'data'),
  env: {
    SERVICE_LLM_PROVIDER: 'provider_a', SERVICE_LLM_BASE_URL: fake.openaiBaseUrl, LLM_PROVIDER_A_API_KEY: 'bench-key',
    SERVICE_RATE_LIMIT_EXPENSIVE: '100000', SERVICE_RATE_LIMIT_DEFAULT: '100000', SERVICE_RATE_LIMIT_PER_KEY: '100000',
  },
});
try {
  const batch = join(dir.path, 'cases.jsonl');
  const rows = Array.from({ length: CASES }, (_, i) => JSON.stringify({ id: `case-${i + 1}`, task: `Sum the numbers of list ${i + 1}`, code: `def total_${i + 1}(xs):\n    return sum(xs) + ${i}\n`, output: String(i) }));
  await writeFile(batch, rows.join('\n') + '\n');
  const run = async (label: string, extra: string[]) => {
    fake.reset();
    fake.script((call) => reply.json({ task_alignment: 7, code_quality: 7, workspace_usage: 7, robustness: 7, overall: 5 + (call.prompt.length % 5), feedback: 'Validate the input.', hardcoded: false }, { delayMs: REPLY_MS }));
    const started = performance.now();
    const res = await runCli(['evaluate', '--batch', batch, '--num-evals', String(EVALUATORS), '--json', '--url', server.url, ...extra]);
    const ms = Math.round(performance.now() - started);
    if (res.code !== 0) throw new Error(`${label}: exit ${res.code}: ${res.stderr}`);
    const { summary } = JSON.parse(res.stdout);
    console.log(`${label.padEnd(22)} ${String(fake.chatRequests().length).padStart(4)} provider calls  ${String(ms).padStart(6)} ms  cache ${summary.cache_hits} hits / ${summary.cache_misses} misses  cost $${summary.cost_usd}`);
  };
  console.log(`${CASES} cases x ${EVALUATORS} evaluators, --concurrency 4 (default), fake provider replies after ${REPLY_MS} ms`);
  await run('cold (empty cache)', []);
  await run('rerun, unchanged', []);
  await run('rerun with --no-cache', ['--no-cache']);
} finally {
  await server.stop();
  await fake.close();
  await dir.remove();
}
