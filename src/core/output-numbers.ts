/**
 * How fractional numbers are shown wherever the command line prints them (JSON, NDJSON,
 * tables, JUnit): rounded to 4 decimal places, so float noise such as 0.9550000000000001
 * (what 0.955 becomes after arithmetic) reads 0.955. Stored values are never rounded; only
 * what is printed. Integers pass unchanged, and a value too small for 4 places keeps 4
 * significant digits instead of turning into 0.
 */
export const OUTPUT_DECIMALS = 4;

export function roundForOutput(x: number): number {
  if (!Number.isFinite(x) || Number.isInteger(x)) return x;
  const rounded = Number(x.toFixed(OUTPUT_DECIMALS));
  return rounded === 0 ? Number(x.toPrecision(OUTPUT_DECIMALS)) : rounded;
}

/** A JSON.stringify replacer that rounds every number with roundForOutput. */
export function outputNumberReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'number' ? roundForOutput(value) : value;
}

/** A number as printed text: `String(roundForOutput(x))`. */
export const formatNumber = (x: number): string => String(roundForOutput(x));
