import { Option, type Command } from 'commander';
import type { ChalkInstance } from 'chalk';
import { JobFailedError, type JobRecord } from '../src/client/index.js';
import { JobStatus } from '../src/contracts/jobs.js';
import { action, ioOf } from './shared/context.js';
import { ExitCode } from './shared/exit-codes.js';
import { addClientOptions, integerIn, positiveNumber, withClient, type ClientOptionValues } from './shared/options.js';
import { printError, table } from './shared/output.js';

interface ListOptions extends ClientOptionValues {
  status?: JobStatus;
  limit?: number;
}

interface WaitOptions extends ClientOptionValues {
  maxWait?: number;
}

/** `service jobs list | get | cancel | wait`: background jobs of the project (from `--async`). */
export function register(program: Command): void {
  const jobs = program.command('jobs').description('background jobs of your project (operations run with --async)');

  const list = jobs
    .command('list', { isDefault: true })
    .description('jobs of the project, newest first')
    .addOption(new Option('--status <status>', 'only jobs in this state').choices(JobStatus.options))
    .option('--limit <n>', 'jobs to show, 1 to 100 (server default 20)', integerIn(1, 100));
  addClientOptions(list);
  list.action(action(async (opts: ListOptions, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const res = await client.jobs.list({ status: opts.status, limit: opts.limit });
      out.result(res, () => {
        if (res.count === 0) return 'no jobs';
        const rows = res.jobs.map((j) => [j.job_id, j.operation, colourStatus(j.status, out.color), j.created_at, String(j.attempts)]);
        return table(['job', 'operation', 'status', 'created', 'attempts'], rows, out.color);
      });
    })));

  const get = jobs.command('get').description('one job: its state, and its result once completed').argument('<id>', 'the job id');
  addClientOptions(get);
  get.action(action(async (id: string, opts: ClientOptionValues, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const job = await client.jobs.get(id);
      out.result(job, () => renderJob(job, out.color));
    })));

  const cancel = jobs.command('cancel').description('cancel a job that has not started yet (exit 1 once it runs)').argument('<id>', 'the job id');
  addClientOptions(cancel);
  cancel.action(action(async (id: string, opts: ClientOptionValues, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const job = await client.jobs.cancel(id);
      out.result(job, () => `job ${job.job_id} cancelled`);
    })));

  const wait = jobs
    .command('wait')
    .description('wait until a job has finished and print it (exit 1 when it failed or was cancelled)')
    .argument('<id>', 'the job id')
    .option('--max-wait <seconds>', 'give up after this long (default: no limit)', positiveNumber);
  addClientOptions(wait);
  wait.action(action(async (id: string, opts: WaitOptions, command: Command) =>
    withClient(opts, command, async (client, out) => {
      const timeoutMs = opts.maxWait === undefined ? undefined : opts.maxWait * 1000;
      const job = await out.withSpinner(`waiting for job ${id}…`, () => client.jobs.wait(id, { timeoutMs }));
      out.result(job, () => renderJob(job, out.color));
      if (job.status === 'completed') return ExitCode.OK;
      printError(ioOf(command), new JobFailedError(job));
      return ExitCode.FAILURE;
    })));
}

function colourStatus(status: JobRecord['status'], c: ChalkInstance): string {
  if (status === 'completed') return c.green(status);
  if (status === 'failed') return c.red(status);
  if (status === 'running') return c.cyan(status);
  return status === 'cancelled' ? c.dim(status) : status;
}

function renderJob(job: JobRecord, c: ChalkInstance): string {
  const lines = [
    `${c.bold(`job ${job.job_id}`)}  ${job.operation}  ${colourStatus(job.status, c)}  (attempts ${job.attempts})`,
    `created ${job.created_at}${job.started_at ? `, started ${job.started_at}` : ''}${job.completed_at ? `, finished ${job.completed_at}` : ''}`,
  ];
  if (job.error) lines.push(c.red(`error: ${job.error}`));
  if (job.status === 'completed') lines.push('', JSON.stringify(job.result, null, 2));
  return lines.join('\n');
}
