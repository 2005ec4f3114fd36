/**
 * The running sum and count of one scope's unit vectors (hybrid recall centres cosines on
 * their mean). Kept in double precision so thousands of adds and removes do not drift; a
 * zero vector (a task the model reduced to nothing) is not counted. A vector of another
 * dimension (reindex to another model) restarts the sum.
 */
export class VectorMean {
  private sum: Float64Array = new Float64Array(0);
  private n = 0;

  get count(): number {
    return this.n;
  }

  add(unit: ArrayLike<number>): void {
    if (!hasDirection(unit)) return;
    if (unit.length !== this.sum.length) {
      this.sum = new Float64Array(unit.length);
      this.n = 0;
    }
    for (let i = 0; i < unit.length; i++) this.sum[i] += unit[i];
    this.n++;
  }

  reset(): void {
    this.sum = new Float64Array(0);
    this.n = 0;
  }

  remove(unit: ArrayLike<number>): void {
    if (!hasDirection(unit) || unit.length !== this.sum.length || this.n === 0) return;
    for (let i = 0; i < unit.length; i++) this.sum[i] -= unit[i];
    this.n--;
    if (this.n === 0) this.sum.fill(0);
  }

  /** The mean for vectors of `dim` dimensions, or null when none of that size are counted. */
  mean(dim: number): Float32Array | null {
    if (this.n === 0 || dim !== this.sum.length) return null;
    const out = new Float32Array(dim);
    for (let i = 0; i < dim; i++) out[i] = this.sum[i] / this.n;
    return out;
  }
}

function hasDirection(v: ArrayLike<number>): boolean {
  for (let i = 0; i < v.length; i++) if (v[i] !== 0) return true;
  return false;
}
