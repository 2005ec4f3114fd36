/**
 * The project's principal directions, removed from the vector side for ranking
 * (docs/behavior.md "Recall" 2). Static embeddings put most of their variance in a few
 * directions every task shares (length, "write a function that…"): after the mean is
 * subtracted, the top two principal components of the project's centred vectors still say
 * more about a task's phrasing than about its job. Projecting them out of query and candidate
 * before the cosine ranks by what is left; tiers keep the centred cosine (and its fitted
 * threshold), so this changes the order, never a tier.
 *
 * Pure: the caller hands over a sample of the project's unit vectors (the same sample on every
 * storage), and per candidate the dot products the storage computes (d·u, m·u).
 */
export const REMOVED_COMPONENTS = 2;
/** The vector side's share of the blend when the components are removed (never without: see DEFAULT_VECTOR_WEIGHT). */
export const DEFAULT_REMOVED_VECTOR_WEIGHT = 0.5;
/** Power-iteration steps per component, on the sample's Gram matrix (cheap: sample × sample per step). */
const ITERATIONS = 100;

/**
 * The top `count` principal directions (unit vectors, orthogonal) of `vectors` centred on their
 * own mean, by power iteration with deflation from a fixed start, so the same sample gives the
 * same directions. The iteration runs on the sample's Gram matrix G = X Xᵀ (n × n for n sampled
 * vectors, built once): each step costs n², not n × dimension, and a direction is Xᵀ v of
 * G's eigenvector v. Fewer (none) when the sample has no spread left.
 */
export function principalComponents(vectors: readonly Float32Array[], count = REMOVED_COMPONENTS): Float32Array[] {
  if (vectors.length < 2) return [];
  const dim = vectors[0].length;
  const rows = vectors.filter((v) => v.length === dim);
  const n = rows.length;
  const mean = new Float64Array(dim);
  for (const v of rows) for (let i = 0; i < dim; i++) mean[i] += v[i] / n;
  const centred = rows.map((v) => Float64Array.from(v, (x, i) => x - mean[i]));
  const gram = centred.map(() => new Float64Array(n));
  for (let a = 0; a < n; a++) {
    for (let b = a; b < n; b++) gram[a][b] = gram[b][a] = dot(centred[a], centred[b]);
  }
  const found: Float64Array[] = [];
  const out: Float32Array[] = [];
  for (let c = 0; c < count; c++) {
    let v = orthonormal(Float64Array.from({ length: n }, (_, i) => ((i * 7919) % 97) / 97 - 0.5), found);
    if (v.length === 0) break;
    for (let step = 0; step < ITERATIONS && v.length > 0; step++) {
      const next = new Float64Array(n);
      for (let a = 0; a < n; a++) next[a] = dot(gram[a], v);
      v = orthonormal(next, found);
    }
    if (v.length === 0) break;
    found.push(v);
    // The direction in the vectors' space: Xᵀ v, at unit length.
    const u = new Float64Array(dim);
    for (let a = 0; a < n; a++) for (let i = 0; i < dim; i++) u[i] += v[a] * centred[a][i];
    const unit = orthonormal(u, []);
    if (unit.length === 0) break;
    out.push(Float32Array.from(unit));
  }
  return out;
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** `v` minus its projections on `basis` (unit, orthogonal), at unit length; empty when nothing is left. */
function orthonormal(v: Float64Array, basis: readonly Float64Array[]): Float64Array<ArrayBufferLike> {
  const out = Float64Array.from(v);
  for (const b of basis) {
    const p = dot(out, b);
    for (let i = 0; i < out.length; i++) out[i] -= p * b[i];
  }
  const n = Math.sqrt(dot(out, out));
  if (!(n > 1e-12)) return new Float64Array(0);
  for (let i = 0; i < out.length; i++) out[i] /= n;
  return out;
}

/**
 * cos(a′, b′) where a = q − m and b = d − m are the centred query and candidate and a′, b′ are
 * them with the directions u removed: a′·b′ = a·b − Σ (a·u)(b·u), |a′|² = |a|² − Σ (a·u)².
 * From the dot products alone: q·d, q·m, d·m, m·m, and per direction q·u, d·u, m·u.
 * 0 when either side vanishes.
 */
/** The directions to remove and the vector weight that goes with their removal. */
export interface ComponentRemoval {
  directions: Float32Array[];
  vectorWeight: number;
}

export function residualCosine(
  qd: number, qm: number, dm: number, mm: number, qu: readonly number[], du: readonly number[], mu: readonly number[],
): number {
  let ab = qd - qm - dm + mm;
  let aa = 1 - 2 * qm + mm;
  let bb = 1 - 2 * dm + mm;
  for (let i = 0; i < qu.length; i++) {
    const au = qu[i] - mu[i];
    const bu = du[i] - mu[i];
    ab -= au * bu;
    aa -= au * au;
    bb -= bu * bu;
  }
  if (!(aa > 1e-12) || !(bb > 1e-12)) return 0;
  return Math.max(-1, Math.min(1, ab / Math.sqrt(aa * bb)));
}
