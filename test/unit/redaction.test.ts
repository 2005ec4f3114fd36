import { describe, expect, it } from 'vitest';
import { REDACTED, redact, redactFields } from '../../src/core/redaction.js';

// Test secrets are assembled from pieces so the repository holds no secret-shaped literal.
const JWT = ['eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9', 'eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ', 'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c'].join('.');
const OPENAI = 'sk-' + 'proj-' + 'Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56';
const OPENAI_LEGACY = 'sk-' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4';
const ANTHROPIC = 'sk-' + 'ant-api03-' + 'Zx9_Yw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe';
const AWS = 'AKIA' + 'IOSFODNN7EXAMPLE';
const AWS_TEMP = 'ASIA' + 'Y34FZKBOKMUTVV7A';
const GITHUB = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
const GITHUB_PAT = 'github_pat_' + '11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz';
const GITLAB = 'glpat-' + 'xY12-zW34_vU56tS78rQ';
const HEX32 = '0123456789abcdef'.repeat(2);

describe('redact: each kind, replaced and counted', () => {
  const cases: [string, string, string, string][] = [
    ['email', 'mail jane.doe+tag@mail.example.co.uk today', 'mail [REDACTED] today', 'email'],
    ['ipv4', 'connect to 192.168.10.254 now', 'connect to [REDACTED] now', 'ipv4'],
    ['jwt', `Authorization: Bearer ${JWT}`, 'Authorization: Bearer [REDACTED]', 'jwt'],
    ['openai project key', `key is ${OPENAI}!`, 'key is [REDACTED]!', 'llm_api_key'],
    ['openai legacy key', `use ${OPENAI_LEGACY} here`, 'use [REDACTED] here', 'llm_api_key'],
    ['anthropic key', `(${ANTHROPIC})`, '([REDACTED])', 'llm_api_key'],
    ['aws key', `id ${AWS} set`, 'id [REDACTED] set', 'cloud_access_key'],
    ['aws temp key', `id ${AWS_TEMP}`, 'id [REDACTED]', 'cloud_access_key'],
    ['github token', `${GITHUB} pushed`, '[REDACTED] pushed', 'code_host_token'],
    ['github pat', `pat ${GITHUB_PAT}`, 'pat [REDACTED]', 'code_host_token'],
    ['gitlab token', `gl ${GITLAB}.`, 'gl [REDACTED].', 'code_host_token'],
    ['hex 32', `digest ${HEX32} ok`, 'digest [REDACTED] ok', 'hex_secret'],
    ['hex with 0x', `wallet 0x${HEX32}${HEX32}`, 'wallet [REDACTED]', 'hex_secret'],
    ['keyword', 'password=hunter2', 'password=[REDACTED]', 'keyword_secret'],
    ['google ai key', `GEMINI ${'AIza' + 'Sy'.repeat(17) + 'X'}`, 'GEMINI [REDACTED]', 'llm_api_key'],
  ];
  it.each(cases)('%s', (_name, input, expected, kind) => {
    const r = redact(input);
    expect(r.text).toBe(expected);
    expect(r.counts).toEqual({ [kind]: 1 });
  });

  it('gho_, ghu_, ghs_, ghr_ are code-host tokens too', () => {
    for (const prefix of ['gho_', 'ghu_', 'ghs_', 'ghr_']) {
      expect(redact(`${prefix}${'Ab1'.repeat(12)}`).counts).toEqual({ code_host_token: 1 });
    }
  });
});

describe('redact: counts and output', () => {
  it('counts every occurrence per kind and never returns the values', () => {
    const r = redact(`a@x.io b@y.io 10.0.0.1 ${GITHUB} password="pw1"`);
    expect(r.counts).toEqual({ email: 2, ipv4: 1, code_host_token: 1, keyword_secret: 1 });
    const serialised = JSON.stringify(r.counts);
    expect(serialised).not.toContain('a@x.io');
    expect(r.text).toBe(`${REDACTED} ${REDACTED} ${REDACTED} ${REDACTED} password="${REDACTED}"`);
  });

  it('leaves plain prose and ordinary code untouched with empty counts', () => {
    const prose =
      'Write a function that sorts a list of 3 users by age, then prints the key points. ' +
      'Use version 2.1 of the API at https://example.com/docs and keep it under 200 lines.';
    const code = 'def add(a, b):\n    return a + b  # see issue #42\nconst total = items.reduce((s, x) => s + x, 0);';
    for (const text of [prose, code, '']) expect(redact(text)).toEqual({ text, counts: {} });
  });
});

describe('redact: idempotent', () => {
  it('redacting redacted text changes nothing and counts nothing', () => {
    const once = redact(
      `mail a@b.io from 10.1.2.3 with ${JWT} ${OPENAI} ${AWS} ${GITHUB} ${HEX32}\n` +
        `password=hunter2 API_KEY: "abc" "secret": 'x' token: abc1\n  key: letmein`,
    );
    expect(Object.keys(once.counts).length).toBeGreaterThan(5);
    expect(redact(once.text)).toEqual({ text: once.text, counts: {} });
  });
});

describe('redact: rule order keeps whole tokens whole', () => {
  it('a JWT after token= is one JWT, not a keyword value cut at a dot', () => {
    expect(redact(`token=${JWT}`)).toEqual({ text: 'token=[REDACTED]', counts: { jwt: 1 } });
  });
  it('an sk- key with a long hex run is one key, not key + hex', () => {
    const key = 'sk-' + 'proj-' + HEX32 + HEX32;
    expect(redact(`export OPENAI=${key}`)).toEqual({ text: 'export OPENAI=[REDACTED]', counts: { llm_api_key: 1 } });
  });
  it('API_KEY="sk-…" counts the provider key only', () => {
    expect(redact(`API_KEY="${OPENAI}"`)).toEqual({ text: 'API_KEY="[REDACTED]"', counts: { llm_api_key: 1 } });
  });
  it('an email as a password value is one keyword secret', () => {
    expect(redact('password=me@example.com')).toEqual({ text: 'password=[REDACTED]', counts: { keyword_secret: 1 } });
  });
});

describe('redact: negatives', () => {
  it.each([
    ['octet over 255', 'ip 999.1.1.1 and 256.0.0.1'],
    ['longer dotted number (version)', 'release 1.2.3.4.5 and 10.0.0.1.7'],
    ['leading zeros', 'code 01.02.03.04'],
    ['three octets', 'version 10.0.1'],
    ['31 hex chars', `id ${HEX32.slice(1)}`],
    ['hex inside a longer word', `x${HEX32}z`],
    ['uuid (short hex groups)', 'id 123e4567-e89b-12d3-a456-426614174000'],
    ['sk- prose without digits', 'use sk-learn-compatible-estimators here'],
    ['sk- too short', 'sk-abc123'],
    ['task- prefix is not sk-', 'task-1234567890abcdefghijKLMNOP'],
    ['AKIA too short / lower case', 'AKIA1234 and akiaiosfodnn7example'],
    ['eyJ without three parts', 'eyJhbGciOiJIUzI1NiJ9 alone'],
    ['at-sign without a domain', 'decorate with @property and user@localhost'],
  ])('%s', (_name, text) => {
    expect(redact(text)).toEqual({ text, counts: {} });
  });

  it('an IP at the end of a sentence is still redacted', () => {
    expect(redact('Server: 10.0.0.1.').text).toBe('Server: [REDACTED].');
  });
  it('an IP with a port keeps the port', () => {
    expect(redact('http://127.0.0.1:8080/x').text).toBe('http://[REDACTED]:8080/x');
  });
  it('exactly 32 hex chars are redacted, upper case too', () => {
    expect(redact(HEX32.toUpperCase()).counts).toEqual({ hex_secret: 1 });
  });
});

describe('redactFields', () => {
  it('redacts every string field, sums counts, and passes null/undefined through', () => {
    const r = redactFields({ task: 'mail a@b.io', code: 'x = "c@d.io"  # 8.8.8.8', output: null, extra: undefined });
    expect(r.fields).toEqual({ task: 'mail [REDACTED]', code: 'x = "[REDACTED]"  # [REDACTED]', output: null, extra: undefined });
    expect(r.counts).toEqual({ email: 2, ipv4: 1 });
    expect(r.redacted).toBe(true);
  });
  it('reports redacted=false and empty counts when nothing matched', () => {
    const fields = { task: 'sort numbers', code: 'sorted(xs)', output: '1 2 3' };
    expect(redactFields(fields)).toEqual({ fields, counts: {}, redacted: false });
  });
  it('does not mutate the input', () => {
    const fields = { task: 'a@b.io' };
    redactFields(fields);
    expect(fields.task).toBe('a@b.io');
  });
});
