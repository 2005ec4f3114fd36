import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runCliInTty, stripAnsi } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { startServer, type ServerHandle } from '../support/server.js';

/** `service billing status` against a real server process (billing off: sandbox figures). */
describe('service billing status', () => {
  let dir: { path: string; remove(): Promise<void> };
  let server: ServerHandle;
  beforeAll(async () => {
    dir = await tempDir('cli-billing-');
    server = await startServer({ dataPath: dir.path });
  });
  afterAll(async () => {
    await server?.stop();
    await dir?.remove();
  });

  it('prints JSON with every status field when piped', async () => {
    const res = await runCli(['billing', 'status', '--url', server.url]);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({
      plan_tier: 'sandbox', status: 'active', billing_interval: 'month', eval_runs_used: 0, eval_runs_limit: 500,
      patterns_used: 0, patterns_limit: 5000, projects_used: 1, projects_limit: 1, overage_enabled: false,
      overage_budget_cap_cents: null, billing_enabled: false,
    });
  });

  it('prints a table on a terminal', async () => {
    const res = await runCliInTty(['billing', 'status', '--url', server.url]);
    expect(res.code).toBe(0);
    const text = stripAnsi(res.output);
    expect(text).toMatch(/plan sandbox \(monthly\), active \(billing off: nothing enforced\)/);
    expect(text).toMatch(/eval runs \(this month\)\s+0\s+500/);
    expect(text).toMatch(/patterns\s+0\s+5000/);
  });
});
