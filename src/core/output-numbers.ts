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

/**
 * Amounts in US dollars (keys ending in `_usd`) keep 6 decimal places, a millionth of a dollar:
 * one judged case often costs less than a hundredth of a cent, and 4 places would print it as 0.
 */
export const USD_DECIMALS = 6;

export function roundUsdForOutput(x: number): number {
  return Number.isFinite(x) ? Number(x.toFixed(USD_DECIMALS)) : x;
}

/** A JSON.stringify replacer that rounds every number with roundForOutput (dollar amounts with roundUsdForOutput). */
export function outputNumberReplacer(key: string, value: unknown): unknown {
  if (typeof value !== 'number') return value;
  return key.endsWith('_usd') ? roundUsdForOutput(value) : roundForOutput(value);
}

/** A dollar amount as printed text. */
export const formatUsd = (x: number): string => String(roundUsdForOutput(x));

/** A number as printed text: `String(roundForOutput(x))`. */
export const formatNumber = (x: number): string => String(roundForOutput(x));
