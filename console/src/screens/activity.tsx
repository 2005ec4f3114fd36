import { allows, type Abilities } from '../abilities.js';
import { ApiError, client, routes } from '../api.js';
import { BarChart, LineChart, bucketize } from '../charts.js';
import { ROLLUP_WINDOWS, type EventsResponse } from '../types.js';
import { ErrorBox, Loading, Section, fmtDate, fmtNumber, fmtPercent, useAction, useLoad } from '../ui.js';

type Event = EventsResponse['events'][number];

const BUCKETS = 12;

function label(ms: number): string {
  return new Date(ms).toISOString().slice(5, 16).replace('T', ' ');
}

export function ActivityScreen({ can }: { can: Abilities }) {
  const metrics = useLoad(() => client.metrics(), []);
  const events = useLoad(() => client.analytics.events({ limit: 1000 }), []);
  const list = events.data?.events ?? [];
  const buckets = bucketize(list, (e: Event) => Date.parse(e.at), BUCKETS);
  const counts = buckets.map((b) => ({
    label: label(b.start),
    values: [b.items.filter((e) => e.kind === 'recall').length, b.items.filter((e) => e.kind === 'learn').length],
  }));
  const duplicates = buckets.map((b) => ({ label: label(b.start), values: [b.items.filter((e) => e.kind === 'recall' && e.best_tier === 'duplicate').length] }));
  const trend = buckets
    .map((b) => ({ label: label(b.start), scores: b.items.filter((e) => e.kind === 'learn' && typeof e.eval_score === 'number').map((e) => e.eval_score as number) }))
    .filter((b) => b.scores.length > 0)
    .map((b) => ({ label: b.label, value: b.scores.reduce((s, v) => s + v, 0) / b.scores.length }));
  const recalls = list.filter((e) => e.kind === 'recall');
  // Lookups (the CLI, this console, MCP) count no reuse but are activity all the same.
  const lookups = recalls.filter((e) => e.readonly === true).length;
  const duplicateHits = recalls.filter((e) => e.best_tier === 'duplicate').length;

  return (
    <>
      <Section title="Value" id="value-title">
        <ErrorBox error={metrics.error} />
        {metrics.loading && <Loading what="metrics" />}
        {metrics.data && (
          <dl class="tiles">
            <div><dt>Patterns</dt><dd>{metrics.data.pattern_count}</dd></div>
            <div><dt>Runs</dt><dd>{metrics.data.runs}</dd></div>
            <div><dt>Recalls (lookups / counting reuse)</dt><dd>{events.data ? `${recalls.length} (${lookups} / ${recalls.length - lookups})` : '—'}</dd></div>
            <div><dt>Reuse rate</dt><dd>{fmtPercent(metrics.data.reuse_rate)}</dd></div>
            <div><dt>Success rate</dt><dd>{fmtPercent(metrics.data.success_rate)}</dd></div>
            <div><dt>Average eval score</dt><dd>{fmtNumber(metrics.data.avg_eval_score)}</dd></div>
            <div><dt>Duplicate hits (work not redone)</dt><dd>{events.data ? duplicateHits : '—'}</dd></div>
          </dl>
        )}
      </Section>
      <Section title="Activity over time" id="activity-title">
        <ErrorBox error={events.error} />
        {events.loading && <Loading what="events" />}
        {events.data && (
          <>
            <p class="muted">The last {events.data.count} recorded events (GET {routes.events.path}), in {BUCKETS} equal spans; recalls include read-only lookups.</p>
            <div class="charts">
              <BarChart title="Recalls and learns" points={counts} series={['recalls', 'learns']} />
              <BarChart title="Duplicate hits" points={duplicates} series={['duplicate hits']} />
              <LineChart title="Eval score of learned runs (mean per span)" points={trend} max={10} />
            </div>
          </>
        )}
      </Section>
      <Section title="ROI rollups" id="rollups-title">
        <div class="rollups">
          {ROLLUP_WINDOWS.map((w) => <Rollup key={w} window={w} canCompute={allows(can, 'analytics:rollup')} />)}
        </div>
      </Section>
    </>
  );
}

function Rollup({ window, canCompute }: { window: (typeof ROLLUP_WINDOWS)[number]; canCompute: boolean }) {
  const stored = useLoad(
    () => client.analytics.getRollup(window).catch((err: unknown) => {
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    }),
    [window],
  );
  const compute = useAction(() => client.analytics.rollup({ window }));
  const rollup = compute.result ?? stored.data;
  return (
    <article class="card-inner" aria-label={`${window} rollup`}>
      <h3>{window}</h3>
      <ErrorBox error={stored.error} />
      {rollup ? (
        <dl class="facts">
          <dt>ROI score</dt><dd>{fmtNumber(rollup.roi_score)}</dd>
          {rollup.roi_basis && <><dt>How the ROI score is made</dt><dd class="muted">{rollup.roi_basis}</dd></>}
          <dt>Recalls</dt>
          <dd>
            {rollup.recall.count}
            {rollup.recall.lookups !== undefined && ` (${rollup.recall.lookups} read-only lookups, ${rollup.recall.counted ?? 0} counting reuse)`}
            {` · ${fmtPercent(rollup.recall.hit_rate)} hits`}
          </dd>
          <dt>Duplicate / adapt / fresh</dt><dd>{rollup.recall.tiers.duplicate} / {rollup.recall.tiers.adapt} / {rollup.recall.tiers.fresh}</dd>
          <dt>Learns</dt><dd>{rollup.learn.count} ({rollup.learn.stored} stored)</dd>
          <dt>Average eval score</dt><dd>{fmtNumber(rollup.learn.avg_eval_score)}</dd>
          <dt>Latency p50 / p95</dt><dd>{fmtNumber(rollup.percentiles.p50)} / {fmtNumber(rollup.percentiles.p95)} ms</dd>
          <dt>Computed</dt><dd>{fmtDate(rollup.computed_at)}</dd>
        </dl>
      ) : stored.loading ? <Loading what="rollup" /> : <p class="muted">Not computed yet.</p>}
      {canCompute
        ? <button type="button" disabled={compute.busy} onClick={() => void compute.run()}>Compute {window} rollup now</button>
        : <p class="muted">Computing a rollup needs an editor key.</p>}
      <ErrorBox error={compute.error} />
    </article>
  );
}
