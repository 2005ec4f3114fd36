import type { Command } from 'commander';
import type { ChalkInstance } from 'chalk';
import type { DeepHealthResponse, HealthResponse } from '../src/client/index.js';
import { action } from './shared/context.js';
import { ExitCode } from './shared/exit-codes.js';
import { addClientOptions, withClient, type ClientOptionValues } from './shared/options.js';
import { table } from './shared/output.js';

interface HealthOptions extends ClientOptionValues {
  deep?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('health')
    .description('check that the service is up (exit 1 when deep health reports error)')
    .option('--deep', 'probe storage, embeddings and the LLM, with latencies');
  addClientOptions(cmd);

  cmd.action(action(async (opts: HealthOptions, command: Command) =>
    withClient(opts, command, async (client, out) => {
      if (!opts.deep) {
        const res = await client.health();
        out.result(res, () => renderBasic(res, out.color));
        return ExitCode.OK;
      }
      const res = await out.withSpinner('probing…', () => client.healthDeep());
      out.result(res, () => renderDeep(res, out.color));
      return res.status === 'error' ? ExitCode.FAILURE : ExitCode.OK;
    })));
}

function statusColour(status: string, c: ChalkInstance): string {
  if (status === 'ok') return c.green(status);
  if (status === 'error' || status === 'down') return c.red(status);
  return c.yellow(status);
}

function renderBasic(res: HealthResponse, c: ChalkInstance): string {
  return `${statusColour(res.status, c)}  storage ${res.storage}, ${res.pattern_count} patterns`;
}

interface Check { status: string; latency_ms: number | null }

function isCheck(v: unknown): v is Check {
  return typeof v === 'object' && v !== null && typeof (v as { status?: unknown }).status === 'string';
}

function renderDeep(res: DeepHealthResponse, c: ChalkInstance): string {
  // `checks` may carry extra probes beyond the spec's three; show every one shaped like a check.
  const rows = Object.entries(res.checks).filter(([, check]) => isCheck(check)).map(([name, check]) => {
    const { status, latency_ms } = check as Check;
    return [name, statusColour(status, c), typeof latency_ms === 'number' ? `${latency_ms.toFixed(1)} ms` : '-'];
  });
  const lines = [
    `${statusColour(res.status, c)}  version ${res.version}, up ${Math.round(res.uptime_seconds)} s`,
    table(['check', 'status', 'latency'], rows, c),
  ];
  const t = res.reuse_tiers;
  if (t) lines.push(`reuse tiers (${t.model}): duplicate ≥ ${t.duplicate} (${t.source.duplicate}), adapt ≥ ${t.adapt} (${t.source.adapt})${t.policy ? `; policy ${t.policy} (${t.policy_source})` : ''}`);
  const p = res.tier_policy;
  if (p) {
    const duplicate = p.duplicate_threshold === null ? 'duplicate by rule' : `duplicate ≥ ${p.duplicate_threshold}`;
    lines.push(`tier policy of this project: ${p.policy}, ${duplicate}, adapt ≥ ${p.adapt_threshold} (${p.source}; ${p.patterns} patterns${p.sampled === null ? '' : `, fitted on ${p.sampled}`})`);
  }
  return lines.join('\n');
}
