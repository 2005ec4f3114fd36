import { dot } from '../../../../core/hybrid.js';

/**
 * The running sum and count of one scope's unit vectors (hybrid recall centres cosines on
 * their mean). Kept in double precision so thousands of adds and removes do not drift; a
 * zero vector (a task the model reduced to nothing) is not counted. A vector of another
 * dimension (reindex to another model) restarts the sum.
 *
 * Between two changes the mean, its norm² and each pattern's dot with it stay what they were,
 * and recall after recall asks for them again (some 40 dot products of the full dimension per
 * recall): they are kept until the next add, remove or reset. Every change of a pattern's
 * vector passes through remove and add (ScopeState), so a kept dot is never one of an old vector.
 */
export class VectorMean {
  private sum: Float64Array = new Float64Array(0);
  private n = 0;
  private kept: { mean: Float32Array; norm2: number; dots: Map<string, number> } | null = null;

  get count(): number {
    return this.n;
  }

  add(unit: ArrayLike<number>): void {
    this.kept = null;
    if (!hasDirection(unit)) return;
    if (unit.length !== this.sum.length) {
      this.sum = new Float64Array(unit.length);
      this.n = 0;
    }
    for (let i = 0; i < unit.length; i++) this.sum[i] += unit[i];
    this.n++;
  }

  reset(): void {
    this.kept = null;
    this.sum = new Float64Array(0);
    this.n = 0;
  }

  remove(unit: ArrayLike<number>): void {
    this.kept = null;
    if (!hasDirection(unit) || unit.length !== this.sum.length || this.n === 0) return;
    for (let i = 0; i < unit.length; i++) this.sum[i] -= unit[i];
    this.n--;
    if (this.n === 0) this.sum.fill(0);
  }

  /** The mean for vectors of `dim` dimensions, or null when none of that size are counted (shared: read only). */
  mean(dim: number): Float32Array | null {
    if (this.n === 0 || dim !== this.sum.length) return null;
    return this.current().mean;
  }

  /** mean · mean (call only when `mean` gave a mean). */
  norm2(): number {
    return this.current().norm2;
  }

  /**
   * The kept dot of pattern `id` with the mean, if worked out since the last change (then the
   * pattern has a vector of the mean's dimension: any change of it clears what is kept). Lets
   * a caller skip looking up the vector at all.
   */
  keptDot(id: string): number | undefined {
    return this.kept?.dots.get(id);
  }

  /** The unit vector `unit` of pattern `id` · the mean (call only when `mean` gave a mean of its dimension). */
  meanDot(id: string, unit: Float32Array): number {
    const kept = this.current();
    let d = kept.dots.get(id);
    if (d === undefined) kept.dots.set(id, (d = dot(unit, kept.mean)));
    return d;
  }

  private current(): { mean: Float32Array; norm2: number; dots: Map<string, number> } {
    if (this.kept) return this.kept;
    const dim = this.sum.length;
    const mean = new Float32Array(dim);
    for (let i = 0; i < dim; i++) mean[i] = this.sum[i] / this.n;
    this.kept = { mean, norm2: dot(mean, mean), dots: new Map() };
    return this.kept;
  }
}

function hasDirection(v: ArrayLike<number>): boolean {
  for (let i = 0; i < v.length; i++) if (v[i] !== 0) return true;
  return false;
}
