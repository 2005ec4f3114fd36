import { describe, expect, it } from 'vitest';
import { formatNumber, formatUsd, outputNumberReplacer, roundForOutput } from '../../src/core/output-numbers.js';

describe('numbers as the command line prints them', () => {
  it('removes float noise and rounds to 4 decimal places', () => {
    expect(roundForOutput(0.9550000000000001)).toBe(0.955);
    expect(roundForOutput(9.555000000000001)).toBe(9.555);
    expect(roundForOutput(2 / 3)).toBe(0.6667);
    expect(formatNumber(0.1 + 0.2)).toBe('0.3');
  });
  it('keeps integers, non-finite values and tiny values (4 significant digits)', () => {
    for (const x of [0, 7, -3, 1_000_000, Number.NaN, Infinity]) expect(roundForOutput(x)).toBe(x);
    expect(roundForOutput(0.0000123456)).toBe(0.00001235);
  });
  it('rounds every number in a JSON document and nothing else', () => {
    const doc = { score: 0.9550000000000001, id: 'x0.1234567', list: [1, 0.30000000000000004], nested: { n: null, ok: true } };
    expect(JSON.stringify(doc, outputNumberReplacer)).toBe('{"score":0.955,"id":"x0.1234567","list":[1,0.3],"nested":{"n":null,"ok":true}}');
  });
  it('keeps dollar amounts (keys ending in _usd) to a millionth of a dollar', () => {
    const doc = { cost_usd: 0.000258, summary: { cost_usd: 0.0123456789, max_cost_usd: 0.30000000000000004 }, score: 0.000258 };
    expect(JSON.stringify(doc, outputNumberReplacer)).toBe('{"cost_usd":0.000258,"summary":{"cost_usd":0.012346,"max_cost_usd":0.3},"score":0.0003}');
    expect(formatUsd(0.0001234567)).toBe('0.000123');
    expect(formatNumber(0.000258)).toBe('0.0003');
  });
});
