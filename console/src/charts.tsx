/**
 * Two small SVG charts drawn from API data (no charting library): bars of counts per time
 * bucket, and a line of values over time. Each has a title and a text summary for screen readers.
 */
export interface Point {
  label: string;
  value: number;
}

const W = 560;
const H = 160;
const PAD = 24;

export function BarChart({ title, points, series }: { title: string; points: { label: string; values: number[] }[]; series: string[] }) {
  const max = Math.max(1, ...points.flatMap((p) => p.values));
  const slot = (W - PAD * 2) / Math.max(1, points.length);
  const bar = Math.max(2, (slot - 4) / Math.max(1, series.length));
  const summary = points.map((p) => `${p.label}: ${p.values.map((v, i) => `${series[i]} ${v}`).join(', ')}`).join('; ');
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}. ${summary || 'no data'}`}>
        <line x1={PAD} y1={H - PAD} x2={W - PAD} y2={H - PAD} class="axis" />
        <text x={PAD} y={12} class="chart-label">max {max}</text>
        {points.map((p, i) =>
          p.values.map((v, s) => {
            const h = ((H - PAD * 2) * v) / max;
            return <rect key={`${i}-${s}`} x={PAD + i * slot + s * bar + 2} y={H - PAD - h} width={bar - 1} height={h} class={`series-${s}`}><title>{`${p.label} ${series[s]}: ${v}`}</title></rect>;
          }),
        )}
        {points.length > 0 && <text x={PAD} y={H - 6} class="chart-label">{points[0].label}</text>}
        {points.length > 1 && <text x={W - PAD} y={H - 6} text-anchor="end" class="chart-label">{points[points.length - 1].label}</text>}
      </svg>
      <figcaption>
        {title}{' '}
        {series.map((name, s) => (
          <span key={name} class={`legend series-${s}`}>{name}</span>
        ))}
      </figcaption>
    </figure>
  );
}

export function LineChart({ title, points, max }: { title: string; points: Point[]; max: number }) {
  const step = (W - PAD * 2) / Math.max(1, points.length - 1);
  const y = (v: number) => H - PAD - ((H - PAD * 2) * v) / max;
  const path = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${(PAD + i * step).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ');
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}. ${points.map((p) => `${p.label}: ${p.value.toFixed(2)}`).join('; ') || 'no data'}`}>
        <line x1={PAD} y1={H - PAD} x2={W - PAD} y2={H - PAD} class="axis" />
        <text x={PAD} y={12} class="chart-label">{max}</text>
        {points.length > 0 && <path d={path} class="line" />}
        {points.map((p, i) => (
          <circle key={i} cx={PAD + i * step} cy={y(p.value)} r={3} class="dot"><title>{`${p.label}: ${p.value.toFixed(2)}`}</title></circle>
        ))}
      </svg>
      <figcaption>{title}</figcaption>
    </figure>
  );
}

/** Buckets timestamps into at most `buckets` equal spans between the first and the last. */
export function bucketize<T>(items: T[], at: (item: T) => number, buckets: number): { start: number; items: T[] }[] {
  if (items.length === 0) return [];
  const times = items.map(at);
  const min = Math.min(...times);
  const max = Math.max(...times);
  const span = Math.max(1, max - min) / buckets;
  const out = Array.from({ length: buckets }, (_, i) => ({ start: min + i * span, items: [] as T[] }));
  items.forEach((item, i) => out[Math.min(buckets - 1, Math.floor((times[i] - min) / span))].items.push(item));
  return out;
}
