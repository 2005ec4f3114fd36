import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { repositoryInputs, wireTypeViolations, type ContractIndex, type ServiceSource } from '../support/wire-type-check.js';

/**
 * Services, the client and the console take and return the contracts' types (z.input /
 * z.output); a hand-written copy next to a contract compiles even after the two drift apart,
 * so this check refuses copies.
 */
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));

let services: ServiceSource[];
let client: ServiceSource[];
let consoleFiles: ServiceSource[];
let contracts: ContractIndex;

beforeAll(async () => {
  ({ services, client, console: consoleFiles, contracts } = await repositoryInputs(ROOT));
});

/** A service file that does not exist on disk: its imports resolve as if it did. */
const fixture = (text: string): ServiceSource => ({ path: join(ROOT, 'src/services/wire-type-fixture.ts'), text });

describe('wire types have one source', () => {
  it('reads the contracts: names (type-only ones too) and object schemas, nested ones included', () => {
    expect(services.length).toBeGreaterThan(20);
    for (const name of ['LearnRequest', 'LearnInput', 'RecallInput', 'RecallResponse', 'KeyInfo', 'DeletionKind']) {
      expect(contracts.names.has(name), name).toBe(true);
    }
    expect(contracts.shapes.get('aged,dry_run,pruned,remaining')).toEqual(['src/contracts/memory.ts AgingResponse']);
    // RecallMatch.pattern is an inline object of the recall contract.
    expect(contracts.shapes.get('code,reuse_count,success_score,task')).toBeDefined();
  });

  it('no service declares a wire type the contracts already have', () => {
    expect(wireTypeViolations(ROOT, services, contracts)).toEqual([]);
  }, 60_000);

  it('no client file declares a wire type the contracts already have', () => {
    expect(client.length).toBeGreaterThan(10);
    expect(wireTypeViolations(ROOT, client, contracts)).toEqual([]);
  }, 60_000);

  it('no console file declares a wire type the contracts already have', () => {
    expect(consoleFiles.some((f) => f.path.endsWith('screens/patterns.tsx'))).toBe(true);
    expect(wireTypeViolations(ROOT, consoleFiles, contracts, 'console/tsconfig.json')).toEqual([]);
  }, 60_000);

  it('catches a copy by name, by literal members, through extends and through an intersection', () => {
    const violations = wireTypeViolations(ROOT, [fixture(`
      import type { Scope } from '../core/types.js';
      /** Same name as the contract's type. */
      export interface LearnResponse { stored: boolean }
      /** AgingResponse's fields under another name. */
      export interface AgingOutcome { aged: number; pruned: number; remaining: number; dry_run?: boolean }
      interface Purged { purged_count: number }
      /** RetentionApplyResponse assembled with extends. */
      export interface RetentionSummary extends Purged { dry_run: boolean }
      /** CheckoutResponse as an intersection. */
      export type CheckoutLink = { checkout_url: string } & {};
      export const unused: Scope | null = null;
    `)], contracts);
    expect(violations).toHaveLength(4);
    expect(violations[0]).toMatch(/LearnResponse has the name of a contract export/);
    expect(violations[1]).toMatch(/AgingOutcome has exactly the fields of .*AgingResponse/);
    expect(violations[2]).toMatch(/RetentionSummary has exactly the fields of .*RetentionApplyResponse/);
    expect(violations[3]).toMatch(/CheckoutLink has exactly the fields of .*CheckoutResponse/);
  }, 60_000);

  it('accepts internal types and the contracts\' own types used by import', () => {
    const violations = wireTypeViolations(ROOT, [fixture(`
      import type { AgingResponse } from '../contracts/memory.js';
      /** Not on the wire: an options object. */
      export interface SweepOptions { keyPrefix?: string }
      /** A subset of a contract's fields is not a copy of it. */
      export interface AgedOnly { aged: number }
      export type SweepMode = 'fast' | 'thorough';
      export async function sweep(_options: SweepOptions): Promise<AgingResponse> {
        return { aged: 0, pruned: 0, remaining: 0, dry_run: false };
      }
    `)], contracts);
    expect(violations).toEqual([]);
  }, 60_000);
});
