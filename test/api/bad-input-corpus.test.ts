/**
 * The bad-input corpus (issue 18): every text field of every endpoint gets every hostile
 * string of test/fixtures/bad-input, on JSON storage and on PostgreSQL. The answer must be a
 * 2xx with the value stored literally, or a 4xx JSON error with a detail; never a 5xx (501 is
 * the spec's answer for LLM endpoints without a provider, after validation passed).
 * One server per storage for the whole file; requests go through inject.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { z } from 'zod';
import { registeredRoutes, type RegisteredRoute } from '../../server/route-registry.js';
import { BAD_NUMBERS, BAD_TEXTS, deepNesting } from '../fixtures/bad-input/corpus.js';
import { requirePostgres } from '../support/pg.js';
import { jsonHarness, pgHarness, type Harness } from './both-storages.js';
import { perFileDatabase } from './db-auth-helpers.js';
import { startServer } from './helpers.js';

const hasPg = await requirePostgres('bad-input corpus');
const database = perFileDatabase('badinput');

/** Percent-encodes every byte of the text's UTF-8 (lone surrogates as their WTF-8 bytes). */
function encodeAll(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    const bytes = cp < 0x80 ? [cp]
      : cp < 0x800 ? [0xc0 | (cp >> 6), 0x80 | (cp & 63)]
      : cp < 0x10000 ? [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)]
      : [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
    out += bytes.map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
  }
  return out;
}

/** A field of an endpoint to fill with the corpus: builds the request for one value. */
interface FieldCase {
  route: string;
  field: string;
  request(value: unknown, n: number): { method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; url: string; body?: unknown };
  /** Where the value must be found afterwards when the answer was 2xx (export record field). */
  stored?: (res: LightMyRequestResponse, n: number) => { key: string; field: string } | null;
  keysOnly?: boolean;
}

const baseTask = (n: number) => `Corpus case ${n} checks hostile field number ${n * 7 + 3}`;
const learnBody = (n: number, extra: Record<string, unknown>) => ({ task: baseTask(n), code: `return ${n};`, eval_score: 7, ...extra });
const learned = (field: string) => (res: LightMyRequestResponse) => {
  const body = res.json() as { stored: boolean; pattern_key: string };
  return body.stored ? { key: body.pattern_key, field } : null;
};
const importKey = (n: number) => `patterns/corpus${n}`;

const TEXT_FIELDS: FieldCase[] = [
  ...['task', 'code', 'output', 'run_id', 'author'].map((field): FieldCase => ({
    route: 'POST /v1/learn', field,
    request: (v, n) => ({ method: 'POST', url: '/v1/learn', body: learnBody(n, { [field]: v }) }),
    stored: learned(field),
  })),
  ...['task', 'code', 'output', 'run_id', 'author'].map((field): FieldCase => ({
    route: 'POST /v1/import', field,
    request: (v, n) => ({ method: 'POST', url: '/v1/import', body: { records: [{ key: importKey(n), ...learnBody(n, { [field]: v }) }] } }),
    stored: (res, n) => ((res.json() as { imported: number }).imported === 1 ? { key: importKey(n), field } : null),
  })),
  { route: 'POST /v1/recall', field: 'task', request: (v) => ({ method: 'POST', url: '/v1/recall', body: { task: v } }) },
  { route: 'POST /v1/recall/batch', field: 'task', request: (v) => ({ method: 'POST', url: '/v1/recall/batch', body: { requests: [{ task: v }] } }) },
  { route: 'GET /v1/recall', field: 'task', request: (v) => ({ method: 'GET', url: `/v1/recall?task=${encodeAll(String(v))}` }) },
  { route: 'POST /v1/skills/register', field: 'skills', request: (v) => ({ method: 'POST', url: '/v1/skills/register', body: { pattern_key: 'patterns/corpus0', skills: [v] } }) },
  { route: 'POST /v1/skills/search', field: 'skills', request: (v) => ({ method: 'POST', url: '/v1/skills/search', body: { skills: [v] } }) },
  ...['task', 'code', 'output', 'run_id', 'case_id', 'name'].map((field): FieldCase => ({
    route: 'POST /v1/evaluate', field,
    request: (v) => ({ method: 'POST', url: '/v1/evaluate', body: { task: 't', code: 'c', [field]: v } }),
  })),
  { route: 'POST /v1/evaluations', field: 'label', request: (v) => ({ method: 'POST', url: '/v1/evaluations', body: { label: v } }) },
  { route: 'POST /v1/evaluations', field: 'ci_provider', request: (v) => ({ method: 'POST', url: '/v1/evaluations', body: { ci_provider: v } }) },
  { route: 'POST /v1/evaluations', field: 'gate.reducer', request: (v) => ({ method: 'POST', url: '/v1/evaluations', body: { gate: { reducer: v } } }) },
  { route: 'POST /v1/evaluations', field: 'git.branch', request: (v) => ({ method: 'POST', url: '/v1/evaluations', body: { git: { branch: v, commit: v } } }) },
  { route: 'GET /v1/evaluations/:id', field: 'id', request: (v) => ({ method: 'GET', url: `/v1/evaluations/${encodeAll(String(v))}` }) },
  { route: 'POST /v1/evaluations/:id/bless', field: 'id', request: (v) => ({ method: 'POST', url: `/v1/evaluations/${encodeAll(String(v))}/bless` }) },
  { route: 'POST /v1/evaluations/:id/finish', field: 'baseline', request: (v) => ({ method: 'POST', url: '/v1/evaluations/000000000000000000/finish', body: { baseline: v } }) },
  { route: 'POST /v1/evaluations/:id/finish', field: 'not_evaluated', request: (v) => ({ method: 'POST', url: '/v1/evaluations/000000000000000000/finish', body: { not_evaluated: [v] } }) },
  { route: 'GET /v1/evaluations/:id/compare/:baseline', field: 'baseline', request: (v) => ({ method: 'GET', url: `/v1/evaluations/000000000000000000/compare/${encodeAll(String(v))}` }) },
  { route: 'POST /v1/compose', field: 'task', request: (v) => ({ method: 'POST', url: '/v1/compose', body: { task: v } }) },
  ...['role', 'current_prompt'].map((field): FieldCase => ({
    route: 'POST /v1/evolve', field,
    request: (v) => ({ method: 'POST', url: '/v1/evolve', body: { role: 'r', current_prompt: 'p', [field]: v } }),
  })),
  { route: 'GET /v1/feedback', field: 'task_type', request: (v) => ({ method: 'GET', url: `/v1/feedback?task_type=${encodeAll(String(v))}` }) },
  { route: 'GET /v1/jobs', field: 'status', request: (v) => ({ method: 'GET', url: `/v1/jobs?status=${encodeAll(String(v))}` }) },
  { route: 'GET /v1/jobs/:id', field: 'id', request: (v) => ({ method: 'GET', url: `/v1/jobs/${encodeAll(String(v))}` }) },
  { route: 'POST /v1/jobs/:id/cancel', field: 'id', request: (v) => ({ method: 'POST', url: `/v1/jobs/${encodeAll(String(v))}/cancel` }) },
  { route: 'DELETE /v1/patterns/:key', field: 'key', request: (v) => ({ method: 'DELETE', url: `/v1/patterns/${encodeAll(String(v))}` }) },
  ...['price_id', 'success_url', 'cancel_url'].map((field): FieldCase => ({
    route: 'POST /v1/billing/checkout', field,
    request: (v) => ({ method: 'POST', url: '/v1/billing/checkout', body: { price_id: 'price_1', success_url: 'https://example.com/ok', cancel_url: 'https://example.com/no', [field]: v } }),
  })),
  { route: 'GET /v1/billing/portal', field: 'return_url', request: (v) => ({ method: 'GET', url: `/v1/billing/portal?return_url=${encodeAll(String(v))}` }) },
  { route: 'GET /v1/patterns/:key', field: 'key', request: (v) => ({ method: 'GET', url: `/v1/patterns/${encodeAll(String(v))}` }) },
  { route: 'GET /v1/patterns/:key/history', field: 'key', request: (v) => ({ method: 'GET', url: `/v1/patterns/${encodeAll(String(v))}/history` }) },
  { route: 'GET /v1/patterns/:key/outcomes', field: 'key', request: (v) => ({ method: 'GET', url: `/v1/patterns/${encodeAll(String(v))}/outcomes` }) },
  ...['recall_id', 'pattern_key', 'detail', 'source'].map((field): FieldCase => ({
    route: 'POST /v1/outcomes', field,
    request: (v) => ({ method: 'POST', url: '/v1/outcomes', body: { recall_id: 'corpus0', pattern_key: 'patterns/corpus0', passed: false, [field]: v } }),
  })),
  { route: 'GET /console/assets/:file', field: 'file', request: (v) => ({ method: 'GET', url: `/console/assets/${encodeAll(String(v))}` }) },
  { route: 'PUT /v1/governance/patterns/:key/classify', field: 'key', request: (v) => ({ method: 'PUT', url: `/v1/governance/patterns/${encodeAll(String(v))}/classify`, body: { classification: 'public' } }) },
  { route: 'PUT /v1/governance/patterns/:key/classify', field: 'classification', request: (v) => ({ method: 'PUT', url: `/v1/governance/patterns/${encodeAll('patterns/corpus0')}/classify`, body: { classification: v } }) },
  { route: 'DELETE /v1/governance/projects/:project_id', field: 'project_id', request: (v) => ({ method: 'DELETE', url: `/v1/governance/projects/${encodeAll(String(v))}` }) },
  { route: 'DELETE /v1/governance/tenants/:tenant_id', field: 'tenant_id', request: (v) => ({ method: 'DELETE', url: `/v1/governance/tenants/${encodeAll(String(v))}` }) },
  { route: 'POST /v1/governance/delete-scope', field: 'dry_run', request: (v) => ({ method: 'POST', url: `/v1/governance/delete-scope?dry_run=${encodeAll(String(v))}` }) },
  { route: 'GET /v1/analytics/rollup/:window', field: 'window', request: (v) => ({ method: 'GET', url: `/v1/analytics/rollup/${encodeAll(String(v))}` }) },
  { route: 'POST /v1/analytics/rollup', field: 'window', request: (v) => ({ method: 'POST', url: '/v1/analytics/rollup', body: { window: v } }) },
  { route: 'GET /v1/analytics/events', field: 'since', request: (v) => ({ method: 'GET', url: `/v1/analytics/events?since=${encodeAll(String(v))}` }) },
  { route: 'GET /v1/governance/export', field: 'classification', request: (v) => ({ method: 'GET', url: `/v1/governance/export?classification=${encodeAll(String(v))}` }) },
  { route: 'POST /v1/keys', field: 'name', keysOnly: true, request: (v) => ({ method: 'POST', url: '/v1/keys', body: { name: v } }) },
  { route: 'POST /v1/keys/bootstrap', field: 'token', request: (v) => ({ method: 'POST', url: '/v1/keys/bootstrap', body: { token: v } }) },
  { route: 'DELETE /v1/keys/:id', field: 'id', request: (v) => ({ method: 'DELETE', url: `/v1/keys/${encodeAll(String(v))}` }) },
  { route: 'POST /v1/keys/:id/rotate', field: 'id', request: (v) => ({ method: 'POST', url: `/v1/keys/${encodeAll(String(v))}/rotate` }) },
];

/** Numeric and enum fields get the BAD_NUMBERS values. */
const NUMBER_FIELDS: FieldCase[] = [
  { route: 'POST /v1/learn', field: 'eval_score', request: (v, n) => ({ method: 'POST', url: '/v1/learn', body: learnBody(n, { eval_score: v }) }) },
  ...['limit', 'offset', 'min_score'].map((field): FieldCase => ({
    route: 'POST /v1/recall', field, request: (v) => ({ method: 'POST', url: '/v1/recall', body: { task: 'parse csv', [field]: v } }),
  })),
  { route: 'POST /v1/outcomes', field: 'score', request: (v) => ({ method: 'POST', url: '/v1/outcomes', body: { recall_id: 'corpus0', pattern_key: 'patterns/corpus0', passed: true, score: v } }) },
  { route: 'POST /v1/outcomes', field: 'passed', request: (v) => ({ method: 'POST', url: '/v1/outcomes', body: { recall_id: 'corpus0', pattern_key: 'patterns/corpus0', passed: v } }) },
  { route: 'POST /v1/evaluate', field: 'num_evals', request: (v) => ({ method: 'POST', url: '/v1/evaluate', body: { code: 'c', num_evals: v } }) },
  ...['sample', 'max_cost_usd', 'no_cache'].map((field): FieldCase => ({
    route: 'POST /v1/evaluate', field, request: (v) => ({ method: 'POST', url: '/v1/evaluate', body: { code: 'c', [field]: v } }),
  })),
  { route: 'POST /v1/evaluations', field: 'num_evals', request: (v) => ({ method: 'POST', url: '/v1/evaluations', body: { num_evals: v } }) },
  { route: 'POST /v1/evaluations', field: 'gate.min_score', request: (v) => ({ method: 'POST', url: '/v1/evaluations', body: { gate: { min_score: v } } }) },
  { route: 'POST /v1/evaluations/:id/finish', field: 'regression_delta', request: (v) => ({ method: 'POST', url: '/v1/evaluations/000000000000000000/finish', body: { regression_delta: v } }) },
  { route: 'GET /v1/evaluations/:id/compare/:baseline', field: 'regression_delta', request: (v) => ({ method: 'GET', url: `/v1/evaluations/000000000000000000/compare/main?regression_delta=${encodeAll(String(v))}` }) },
  { route: 'POST /v1/evolve', field: 'num_issues', request: (v) => ({ method: 'POST', url: '/v1/evolve', body: { role: 'r', current_prompt: 'p', num_issues: v } }) },
  { route: 'POST /v1/analyze-failures', field: 'min_count', request: (v) => ({ method: 'POST', url: '/v1/analyze-failures', body: { min_count: v } }) },
  { route: 'PATCH /v1/billing/overage', field: 'budget_cap_cents', request: (v) => ({ method: 'PATCH', url: '/v1/billing/overage', body: { enabled: true, budget_cap_cents: v } }) },
  { route: 'PUT /v1/governance/retention', field: 'retention_days', request: (v) => ({ method: 'PUT', url: '/v1/governance/retention', body: { retention_days: v } }) },
  { route: 'POST /v1/keys', field: 'max_patterns', keysOnly: true, request: (v) => ({ method: 'POST', url: '/v1/keys', body: { name: 'n', max_patterns: v } }) },
  { route: 'POST /v1/import', field: 'eval_score', request: (v, n) => ({ method: 'POST', url: '/v1/import', body: { records: [{ key: importKey(n), ...learnBody(n, { eval_score: v }) }] } }) },
];

/** Endpoints with no caller-supplied text: their bodies get deep nesting and junk only. */
const BODY_ONLY_ROUTES = [
  'POST /v1/aging', 'POST /v1/feedback/decay', 'POST /v1/governance/retention/apply', 'GET /v1/metrics',
  'GET /v1/export', 'GET /v1/keys', 'GET /v1/health', 'GET /v1/health/deep', 'GET /v1/version', 'GET /metrics', 'GET /livez', 'GET /readyz',
  'GET /v1/governance/retention', 'GET /v1/openapi.json', 'GET /v1/billing/status', 'POST /v1/billing/webhook',
  'GET /console', 'GET /v1/access',
];

/**
 * Cases read from the routes' own declarations (server/define-route.ts): every declared query
 * field of a GET or DELETE route without a case written above gets the corpus too (numeric
 * fields the numbers, the others the strings), so a new endpoint's query string is covered
 * without an entry here. Body fields need a valid rest of the body, so they are written above.
 */
function declaredQueryCases(routes: readonly RegisteredRoute[]): { text: FieldCase[]; numbers: FieldCase[] } {
  const written = new Set([...TEXT_FIELDS, ...NUMBER_FIELDS].map((fc) => `${fc.route} ${fc.field}`));
  const text: FieldCase[] = [];
  const numbers: FieldCase[] = [];
  for (const r of routes) {
    const query = r.config.contract?.query;
    if (!query || (r.method !== 'GET' && r.method !== 'DELETE') || r.url.includes(':')) continue;
    const json = z.toJSONSchema(query, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, { type?: string }> };
    for (const [field, property] of Object.entries(json.properties ?? {})) {
      const route = `${r.method} ${r.url}`;
      if (written.has(`${route} ${field}`)) continue;
      const fc: FieldCase = { route, field, request: (v) => ({ method: r.method as 'GET', url: `${r.url}?${field}=${encodeAll(String(v))}` }) };
      (property.type === 'number' || property.type === 'integer' ? numbers : text).push(fc);
    }
  }
  return { text, numbers };
}

/** Why the answer breaks the rule, or null when it is a 2xx or a 4xx JSON error with a detail. */
function serverFault(res: LightMyRequestResponse, what: string, llmRoute: boolean): string | null {
  // 501 is the spec's answer for a feature this server has not configured (no LLM, no billing).
  const allowed = (llmRoute || what.includes('/v1/billing/')) && res.statusCode === 501;
  if (res.statusCode >= 500 && !allowed) return `${what} → ${res.statusCode} ${res.body.slice(0, 200)}`;
  if (res.statusCode >= 400) {
    let detail: unknown;
    try {
      detail = (res.json() as { detail?: unknown }).detail;
    } catch {
      detail = undefined;
    }
    if (typeof detail !== 'string') return `${what} → ${res.statusCode} without a JSON detail: ${res.body.slice(0, 200)}`;
  }
  return null;
}

const isLlm = (route: string) => /evaluate|compose|evolve/.test(route);

for (const storage of ['json', 'postgres'] as const) {
  describe.skipIf(storage === 'postgres' && !hasPg)(`bad-input corpus on ${storage} storage`, () => {
    let h: Harness;
    let declared: ReturnType<typeof declaredQueryCases>;
    beforeAll(async () => {
      h = storage === 'json' ? await jsonHarness() : await pgHarness(database);
      declared = declaredQueryCases(registeredRoutes(h.server));
      // A pattern for skills register to tag.
      const seeded = await h.call('POST', '/v1/import', { records: [{ key: 'patterns/corpus0', task: 'seed task for tags', code: 'x', eval_score: 5 }] });
      expect(seeded.statusCode).toBe(200);
    }, 60_000);
    afterAll(async () => {
      await h?.close();
      if (storage === 'postgres') await database.drop();
    });

    it('every text field: 2xx and stored literally, or a 4xx with a detail', async () => {
      const faults: string[] = [];
      const expected: { key: string; field: string; value: string; what: string }[] = [];
      let n = 1;
      for (const fc of [...TEXT_FIELDS, ...declared.text]) {
        if (fc.keysOnly && !h.keysEnabled) continue;
        for (const bad of BAD_TEXTS) {
          const caseNo = n++;
          const req = fc.request(bad.value, caseNo);
          const what = `${fc.route} ${fc.field} = ${bad.name}`;
          const res = await h.call(req.method, req.url, req.body);
          const fault = serverFault(res, what, isLlm(fc.route));
          if (fault) faults.push(fault);
          if (res.statusCode < 300 && fc.stored) {
            const at = fc.stored(res, caseNo);
            if (at) expected.push({ ...at, value: bad.value, what });
          }
        }
      }
      expect(faults).toEqual([]);
      const exported = (await h.call('GET', '/v1/export')).json() as { records: Record<string, unknown>[] };
      const byKey = new Map(exported.records.map((r) => [r.key as string, r]));
      for (const e of expected) expect(byKey.get(e.key)?.[e.field], e.what).toBe(e.value);
      // The rule (NUL and lone surrogates refused) holds the same on both storages.
      expect(expected.some((e) => e.value.includes('\u0000'))).toBe(false);
    }, 120_000);

    it('every numeric field: out of range or wrong type is a 4xx, never a 5xx', async () => {
      const faults: string[] = [];
      let n = 5000;
      for (const fc of [...NUMBER_FIELDS, ...declared.numbers]) {
        if (fc.keysOnly && !h.keysEnabled) continue;
        for (const bad of BAD_NUMBERS) {
          const req = fc.request(bad.value, n++);
          const res = await h.call(req.method, req.url, req.body);
          const fault = serverFault(res, `${fc.route} ${fc.field} = ${bad.name}`, isLlm(fc.route));
          if (fault) faults.push(fault);
        }
      }
      expect(faults).toEqual([]);
    }, 60_000);

    it('deeply nested and malformed bodies are 4xx on every body-taking route', async () => {
      const faults: string[] = [];
      const posts = [...TEXT_FIELDS, ...NUMBER_FIELDS]
        .map((fc) => fc.route)
        .concat(BODY_ONLY_ROUTES)
        .filter((r) => /^(POST|PUT) /.test(r) && !r.includes(':'));
      for (const route of [...new Set(posts)]) {
        const [method, url] = route.split(' ') as ['POST' | 'PUT', string];
        for (const payload of [deepNesting(5000), '{"task":', '[1,2,3]', '"just a string"', '{"task":"a","task":{"b":1}}']) {
          const res = await h.raw(method, url, payload);
          const fault = serverFault(res, `${route} with ${payload.slice(0, 20)}`, isLlm(route));
          if (fault) faults.push(fault);
        }
      }
      expect(faults).toEqual([]);
    }, 60_000);

    it('covers every registered route (a new endpoint must join the corpus)', async () => {
      const t = storage === 'json' ? await startServer() : null;
      try {
        if (!t) return;
        const { text, numbers } = declaredQueryCases(registeredRoutes(t.server));
        const covered = new Set([...TEXT_FIELDS, ...NUMBER_FIELDS, ...text, ...numbers].map((f) => f.route).concat(BODY_ONLY_ROUTES));
        const missing = registeredRoutes(t.server).map((r) => `${r.method} ${r.url}`).filter((r) => !covered.has(r));
        expect(missing).toEqual([]);
        // GET /v1/patterns has no case written here: its declared query fields are the ones used.
        expect(text.filter((fc) => fc.route === 'GET /v1/patterns').map((fc) => fc.field).sort())
          .toEqual(['classification', 'cursor', 'source', 'updated_after', 'updated_before']);
        expect(numbers.filter((fc) => fc.route === 'GET /v1/patterns').map((fc) => fc.field).sort()).toEqual(['limit', 'max_score', 'min_score']);
      } finally {
        await t?.close();
      }
    });
  });
}
