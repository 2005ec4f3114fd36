import type { LoadResult } from './load.js';

/** One load run with where it ran and what the server spent on it. */
export interface HttpRow extends LoadResult {
  /** Which build served ('this', or the folder of a --compare build). */
  build: string;
  storage: string;
  size: number;
  workers: number;
  /** Server CPU (all its processes) per answered request, in milliseconds. */
  cpuMsPerRequest: number;
  /** PostgreSQL backends' CPU per request, in milliseconds (null: not PostgreSQL). */
  pgCpuMsPerRequest: number | null;
  /** PostgreSQL transactions (statements outside BEGIN count one each) per request. */
  pgTransactionsPerRequest: number | null;
  /** req/s of GET /v1/version at the same storage, size and connections (null: not measured). */
  versionPerSecond: number | null;
}

const HEADER = ['build', 'storage', 'size', 'workers', 'conns', 'scenario', 'req/s', 'x version', 'p50 ms', 'p95 ms', 'p99 ms', 'non-2xx', 'errors', 'cpu ms/req', 'pg ms/req', 'pg tx/req'];

function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}

export function rowCells(r: HttpRow): string[] {
  return [
    r.build, r.storage, r.size.toLocaleString('en-US'), String(r.workers), String(r.connections), r.scenario,
    Math.round(r.perSecond).toLocaleString('en-US'),
    r.versionPerSecond ? fixed(r.perSecond / r.versionPerSecond, 3) : '-',
    fixed(r.p50, 1), fixed(r.p95, 1), fixed(r.p99, 1), String(r.non2xx), String(r.errors), fixed(r.cpuMsPerRequest, 2),
    r.pgCpuMsPerRequest === null ? '-' : fixed(r.pgCpuMsPerRequest, 2),
    r.pgTransactionsPerRequest === null ? '-' : fixed(r.pgTransactionsPerRequest, 2),
  ];
}

/** A plain-text table with right-aligned numbers. */
export function httpTable(rows: HttpRow[]): string {
  const cells = [HEADER, ...rows.map(rowCells)];
  const widths = HEADER.map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  const line = (c: string[]) => c.map((v, i) => (i < 3 || i === 5 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  return [line(HEADER), line(widths.map((w) => '-'.repeat(w))), ...cells.slice(1).map(line)].join('\n');
}
