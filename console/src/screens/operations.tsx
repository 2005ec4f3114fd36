import { useState } from 'preact/hooks';
import { client, filled } from '../api.js';
import type { Abilities } from '../abilities.js';
import {
  JOB_STATUSES,
  ROLES,
  type CreateKeyRequest,
  type IssuedKey,
  type JobRecord,
  type JobStatus,
  type KeyInfo,
} from '../types.js';
import { Confirm, CopyButton, ErrorBox, Loading, Section, fmtDate, useAction, useLoad } from '../ui.js';

export function OperationsScreen({ can }: { can: Abilities }) {
  return (
    <>
      <Health />
      <Jobs />
      {can.admin && <Keys can={can} />}
      {can.admin && <Retention />}
      {can.admin && <Billing />}
    </>
  );
}

function Health() {
  const basic = useLoad(() => client.health(), []);
  const deep = useLoad(() => client.healthDeep(), []);
  return (
    <Section title="Health" id="health-title">
      <ErrorBox error={basic.error} />
      {basic.data && (
        <p>
          Status <strong class={`status-${basic.data.status}`}>{basic.data.status}</strong> · storage {basic.data.storage} · {basic.data.pattern_count} patterns
        </p>
      )}
      <ErrorBox error={deep.error} />
      {deep.loading && <Loading what="deep health" />}
      {deep.data && (
        <>
          <div class="table-wrap">
            <table>
              <caption>Deep health: {deep.data.status} · version {deep.data.version} · up {Math.round(deep.data.uptime_seconds)} s</caption>
              <thead><tr><th scope="col">Check</th><th scope="col">Status</th><th scope="col">Latency</th></tr></thead>
              <tbody>
                {Object.entries(deep.data.checks).map(([name, check]) => (
                  <tr key={name}>
                    <td>{name}</td>
                    <td>{(check as { status: string }).status}</td>
                    <td>{(check as { latency_ms: number | null }).latency_ms ?? '—'} ms</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {deep.data.reuse_tiers && (
            <p class="muted">
              Reuse tiers: duplicate ≥ {deep.data.reuse_tiers.duplicate} ({deep.data.reuse_tiers.source.duplicate}), adapt ≥ {deep.data.reuse_tiers.adapt} ({deep.data.reuse_tiers.source.adapt}), model {deep.data.reuse_tiers.model}
            </p>
          )}
        </>
      )}
    </Section>
  );
}

function Jobs() {
  const [status, setStatus] = useState('');
  const jobs = useLoad(() => client.jobs.list({ ...filled({ status: status as JobStatus }), limit: 50 }), [status]);
  const [cancelling, setCancelling] = useState<JobRecord | null>(null);
  const cancel = useAction((id: string) => client.jobs.cancel(id));
  return (
    <Section title="Jobs" id="jobs-title">
      <label>
        Status
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
          <option value="">any</option>
          {JOB_STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
      </label>
      <ErrorBox error={jobs.error} />
      <ErrorBox error={cancel.error} />
      {jobs.loading && <Loading what="jobs" />}
      {jobs.data && jobs.data.jobs.length === 0 && <p class="muted">No job.</p>}
      {jobs.data && jobs.data.jobs.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead><tr><th scope="col">Job</th><th scope="col">Operation</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Attempts</th><th scope="col">Error</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>
              {jobs.data.jobs.map((job) => (
                <tr key={job.job_id}>
                  <td><code>{job.job_id.slice(0, 8)}</code></td><td>{job.operation}</td><td>{job.status}</td><td>{fmtDate(job.created_at)}</td><td>{job.attempts}</td><td>{job.error ?? ''}</td>
                  <td>{job.status === 'pending' && <button type="button" onClick={() => setCancelling(job)}>Cancel job…</button>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cancelling && (
        <Confirm
          title="Cancel this job?"
          confirmLabel="Cancel the job"
          busy={cancel.busy}
          onCancel={() => setCancelling(null)}
          onConfirm={async () => {
            await cancel.run(cancelling.job_id);
            setCancelling(null);
            jobs.reload();
          }}
        >
          <p>The pending <strong>{cancelling.operation}</strong> job <code>{cancelling.job_id}</code> will not run.</p>
        </Confirm>
      )}
    </Section>
  );
}

function Keys({ can }: { can: Abilities }) {
  const keys = useLoad(() => (can.keys ? client.keys.list() : Promise.resolve(null)), [can.keys]);
  const [name, setName] = useState('');
  const [role, setRole] = useState('reader');
  const [issued, setIssued] = useState<IssuedKey | null>(null);
  const [pending, setPending] = useState<{ key: KeyInfo; what: 'rotate' | 'revoke' } | null>(null);
  const create = useAction(() => client.keys.create({ name, role: role as CreateKeyRequest['role'] }));
  const change = useAction((key: KeyInfo, what: 'rotate' | 'revoke') =>
    what === 'rotate' ? client.keys.rotate(key.key_id) : client.keys.revoke(key.key_id),
  );
  return (
    <Section title="API keys" id="keys-title">
      {!can.keys && <p class="muted">{can.keysNote}</p>}
      {can.keys && (
        <>
          <form class="row" onSubmit={async (e) => {
            e.preventDefault();
            const key = await create.run();
            if (key) { setIssued(key); setName(''); keys.reload(); }
          }}>
            <label>
              Name
              <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={100} />
            </label>
            <label>
              Role
              <select value={role} onChange={(e) => setRole(e.currentTarget.value)}>
                {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
              </select>
            </label>
            <button type="submit" disabled={create.busy}>Create key</button>
          </form>
          <ErrorBox error={create.error} />
          <ErrorBox error={change.error} />
          {issued && (
            <div class="secret" role="status">
              <p>Secret of <strong>{issued.name}</strong>, shown once: store it now.</p>
              <pre class="code" aria-label="New secret">{issued.secret}</pre>
              <CopyButton text={issued.secret} label="Copy secret" />
              <button type="button" onClick={() => setIssued(null)}>I stored it, hide it</button>
            </div>
          )}
          <ErrorBox error={keys.error} />
          {keys.data && (
            <div class="table-wrap">
              <table>
                <thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Prefix</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
                <tbody>
                  {keys.data.keys.map((k) => (
                    <tr key={k.key_id}>
                      <td>{k.name}</td><td>{k.role}</td><td><code>{k.prefix}</code></td><td>{k.status}</td><td>{fmtDate(k.created_at)}</td>
                      <td>
                        {k.status === 'active' && (
                          <>
                            <button type="button" onClick={() => setPending({ key: k, what: 'rotate' })}>Rotate…</button>{' '}
                            <button type="button" class="danger" onClick={() => setPending({ key: k, what: 'revoke' })}>Revoke…</button>
                          </>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
      {pending && (
        <Confirm
          title={pending.what === 'rotate' ? 'Rotate this key?' : 'Revoke this key?'}
          confirmLabel={pending.what === 'rotate' ? 'Rotate the key' : 'Revoke the key'}
          busy={change.busy}
          onCancel={() => setPending(null)}
          onConfirm={async () => {
            const result = await change.run(pending.key, pending.what);
            setPending(null);
            if (result && 'secret' in result) setIssued(result as IssuedKey);
            keys.reload();
          }}
        >
          <p>
            Key <strong>{pending.key.name}</strong> ({pending.key.role}, <code>{pending.key.prefix}</code>):{' '}
            {pending.what === 'rotate' ? 'its current secret stops working at once; the new one is shown once.' : 'every request with it is refused from now on.'}
          </p>
        </Confirm>
      )}
    </Section>
  );
}

function Retention() {
  const policy = useLoad(() => client.governance.retention.get(), []);
  const dryRun = useAction(() => client.governance.retention.apply(true));
  const apply = useAction(() => client.governance.retention.apply(false));
  const [asking, setAsking] = useState(false);
  return (
    <Section title="Retention" id="retention-title">
      <ErrorBox error={policy.error} />
      {policy.data && <p>Patterns are kept <strong>{policy.data.retention_days} days</strong> after their last update (set by: {policy.data.source}).</p>}
      <div class="row">
        <button type="button" disabled={dryRun.busy} onClick={() => void dryRun.run()}>Count what apply would delete (dry run)</button>
        {dryRun.result && <span role="status">{dryRun.result.purged_count} patterns are past their retention.</span>}
      </div>
      <ErrorBox error={dryRun.error} />
      {dryRun.result && dryRun.result.purged_count > 0 && (
        <button type="button" class="danger" onClick={() => setAsking(true)}>Apply retention…</button>
      )}
      {apply.result && <p role="status">{apply.result.purged_count} patterns deleted.</p>}
      <ErrorBox error={apply.error} />
      {asking && dryRun.result && (
        <Confirm
          title="Apply the retention policy?"
          confirmLabel={`Delete ${dryRun.result.purged_count} patterns`}
          busy={apply.busy}
          onCancel={() => setAsking(false)}
          onConfirm={async () => {
            await apply.run();
            setAsking(false);
            void dryRun.run();
          }}
        >
          <p>The dry run counted <strong>{dryRun.result.purged_count} patterns</strong> older than {policy.data?.retention_days ?? '?'} days. They are deleted for good.</p>
        </Confirm>
      )}
    </Section>
  );
}

function Billing() {
  const status = useLoad(() => client.billing.status(), []);
  if (status.loading) return null;
  if (status.error) return <Section title="Billing" id="billing-title"><ErrorBox error={status.error} /></Section>;
  const b = status.data;
  if (!b || !b.billing_enabled) return <Section title="Billing" id="billing-title"><p class="muted">Billing is off on this server.</p></Section>;
  return (
    <Section title="Billing" id="billing-title">
      <dl class="facts">
        <dt>Plan</dt><dd>{b.plan_tier} ({b.status}, {b.billing_interval})</dd>
        <dt>Eval runs</dt><dd>{b.eval_runs_used} / {b.eval_runs_limit}</dd>
        <dt>Patterns</dt><dd>{b.patterns_used} / {b.patterns_limit}</dd>
        <dt>Projects</dt><dd>{b.projects_used} / {b.projects_limit}</dd>
        <dt>Overage</dt><dd>{b.overage_enabled ? 'on' : 'off'}</dd>
        <dt>Usage resets</dt><dd>{fmtDate(b.reset_date)}</dd>
      </dl>
    </Section>
  );
}
