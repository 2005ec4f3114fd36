import { seededRandom } from '../synthetic.js';

export { seededRandom };

/** A seeded Fisher–Yates shuffle (a copy). */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** A number in [lo, hi) from the random source. */
export function between(random: () => number, lo: number, hi: number): number {
  return lo + random() * (hi - lo);
}
