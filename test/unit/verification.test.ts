import { describe, expect, it } from 'vitest';
import { parseVerdicts, verifiedTier } from '../../src/core/verification.js';

describe('verifiedTier', () => {
  it('lowers a tier and never raises one', () => {
    expect(verifiedTier('duplicate', 'adapt')).toBe('adapt');
    expect(verifiedTier('duplicate', 'fresh')).toBe('fresh');
    expect(verifiedTier('adapt', 'fresh')).toBe('fresh');
    expect(verifiedTier('adapt', 'duplicate')).toBe('adapt');
    expect(verifiedTier('fresh', 'duplicate')).toBe('fresh');
    expect(verifiedTier('adapt', 'adapt')).toBe('adapt');
  });
});

describe('parseVerdicts', () => {
  it('reads numbered verdicts, accepting numeric strings and a missing reason', () => {
    const got = parseVerdicts({ verdicts: [{ candidate: 1, verdict: 'adapt', reason: 'close' }, { candidate: '2', verdict: 'fresh' }] }, 2);
    expect([...got]).toEqual([[1, { verdict: 'adapt', reason: 'close' }], [2, { verdict: 'fresh', reason: '' }]]);
  });

  it('skips entries out of range, repeated, or with unknown verdicts', () => {
    const got = parseVerdicts({
      verdicts: [
        { candidate: 0, verdict: 'adapt' }, { candidate: 3, verdict: 'adapt' }, { candidate: 1.5, verdict: 'adapt' },
        { candidate: 1, verdict: 'as is' }, { candidate: 2, verdict: 'fresh' }, { candidate: 2, verdict: 'duplicate' }, null,
      ],
    }, 2);
    expect([...got]).toEqual([[2, { verdict: 'fresh', reason: '' }]]);
  });

  it('returns nothing for answers of the wrong shape', () => {
    for (const value of [undefined, null, 'fresh', [], {}, { verdicts: 'all fine' }]) expect(parseVerdicts(value, 3).size).toBe(0);
  });

  it('caps long reasons', () => {
    const [[, v]] = [...parseVerdicts({ verdicts: [{ candidate: 1, verdict: 'fresh', reason: 'x'.repeat(2000) }] }, 1)];
    expect(v.reason).toHaveLength(500);
  });
});
