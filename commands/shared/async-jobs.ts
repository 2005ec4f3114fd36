import type { Command } from 'commander';
import type { AsyncOperation, AsyncResult, ServiceClient } from '../../src/client/index.js';
import type { Output } from './output.js';

/**
 * `--async` / `--wait` for the commands whose endpoint accepts `Prefer: respond-async`.
 * A command adds the flags with addAsyncOptions(cmd) and wraps its request:
 *
 *   const res = await viaJobWhenAsked(opts, client, out, { operation: 'compose', body },
 *     () => out.withSpinner('composing…', () => client.llm.compose(body)));
 *   if (res === undefined) return; // --async: the job id was printed
 *   out.result(res, () => render(res));
 */
export interface AsyncOptionValues {
  async?: boolean;
  wait?: boolean;
}

export function addAsyncOptions(cmd: Command): Command {
  return cmd
    .option('--async', 'run as a background job: print its id and return (follow with `service jobs wait <id>`)')
    .option('--wait', 'run as a background job and wait for its result (survives a server restart)');
}

/** An operation to run as a job; its result is checked with the synchronous answer's contract. */
export interface AsyncRequest<O extends AsyncOperation> {
  operation: O;
  body?: unknown;
}

/** Prints an accepted job: its id (human) or the 202 body (JSON). */
export function printAccepted(out: Output, accepted: { job_id: string; status: string }): void {
  out.result(accepted, () => out.asInvoked(`job ${accepted.job_id} ${accepted.status}: follow it with \`service jobs wait ${accepted.job_id}\``));
}

/** Submits as a job and waits for its result, with a spinner showing the job's state on a TTY. */
export function submitAndWait<O extends AsyncOperation>(client: ServiceClient, out: Output, request: AsyncRequest<O>): Promise<AsyncResult<O>> {
  return out.withSpinner(`waiting for the ${request.operation} job…`, () => client.jobs.run(request.operation, request.body));
}

/**
 * --wait: the job's result; --async: prints the job id and returns undefined; neither: the
 * synchronous call.
 */
export async function viaJobWhenAsked<O extends AsyncOperation>(
  opts: AsyncOptionValues,
  client: ServiceClient,
  out: Output,
  request: AsyncRequest<O>,
  sync: () => Promise<AsyncResult<O>>,
): Promise<AsyncResult<O> | undefined> {
  if (opts.wait) return submitAndWait(client, out, request);
  if (opts.async) {
    printAccepted(out, await client.jobs.submit(request.operation, request.body));
    return undefined;
  }
  return sync();
}

/**
 * `service import --async | --wait`: one job per chunk. --async prints the accepted job (or
 * `{jobs, count}` when the file needed several) and returns undefined; --wait returns the
 * summed totals, like the synchronous import.
 */
export async function importViaJobs(
  opts: AsyncOptionValues & { overwrite?: boolean },
  client: ServiceClient,
  out: Output,
  records: unknown[],
): Promise<{ imported: number; skipped: number; total: number } | undefined> {
  const accepted = await client.jobs.submitImport(records, { overwrite: opts.overwrite === true });
  if (!opts.wait) {
    if (accepted.length === 1) printAccepted(out, accepted[0]);
    else out.result({ jobs: accepted, count: accepted.length }, () => accepted.map((a) => `job ${a.job_id} ${a.status}`).join('\n'));
    return undefined;
  }
  const totals = { imported: 0, skipped: 0, total: 0 };
  await out.withSpinner(`waiting for ${accepted.length} import job(s)…`, async () => {
    for (const { job_id } of accepted) {
      const result = await client.jobs.result('import', await client.jobs.wait(job_id));
      totals.imported += result.imported;
      totals.skipped += result.skipped;
      totals.total += result.total;
    }
  });
  return totals;
}
