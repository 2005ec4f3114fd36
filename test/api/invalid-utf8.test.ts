/**
 * Issue 25 row 8: text is what the client sent. A JSON (or NDJSON) body whose bytes are not
 * well-formed UTF-8 is refused with 400 naming the offset of the first bad byte, whatever
 * charset the Content-Type declares, and nothing is stored. Well-formed multi-byte text is
 * stored byte for byte.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstInvalidUtf8Offset } from '../../src/core/utf8.js';
import { startServer, type TestServer } from './helpers.js';

let t: TestServer;

beforeAll(async () => {
  t = await startServer();
});
afterAll(async () => {
  await t?.close();
});

const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));
const send = (method: 'POST', url: string, payload: Buffer, contentType = 'application/json') =>
  t.server.inject({ method, url, payload, headers: { 'content-type': contentType } });
const stored = async () => (await t.call('GET', '/v1/export')).json().count as number;

// [what it is, the bad bytes]; each goes inside the task string of a learn body.
const BAD: [string, number[]][] = [
  ['a Latin-1 é', [0xe9]],
  ['a lone continuation byte', [0x80]],
  ['an overlong "/"', [0xc0, 0xaf]],
  ['a UTF-16 surrogate encoded as UTF-8', [0xed, 0xa0, 0x80]],
  ['a code point past U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ['a 3-byte sequence cut short', [0xe6, 0x97]],
];

describe('request bodies that are not UTF-8', () => {
  it('a learn body with invalid bytes is 400 naming the byte offset, for any declared charset; nothing is stored', async () => {
    const prefix = '{"task":"caf';
    for (const [what, bad] of BAD) {
      for (const contentType of ['application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1']) {
        const body = bytes(prefix, bad, ' au lait","code":"brew()","eval_score":7}');
        const res = await send('POST', '/v1/learn', body, contentType);
        expect(res.statusCode, `${what} (${contentType})`).toBe(400);
        expect(res.json()).toMatchObject({
          code: 'bad_request',
          detail: `request body is not valid UTF-8: invalid byte sequence at byte offset ${Buffer.byteLength(prefix)}`,
        });
      }
    }
    expect(await stored()).toBe(0);
  });

  it('the offset counts bytes, after multi-byte characters that are fine', async () => {
    const prefix = '{"task":"日本語 😀 ';
    const res = await send('POST', '/v1/learn', bytes(prefix, [0xff], '","code":"x","eval_score":5}'));
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toContain(`at byte offset ${Buffer.byteLength(prefix)}`);
    expect(await stored()).toBe(0);
  });

  it('an NDJSON import with an invalid byte on a later line imports nothing', async () => {
    const first = '{"task":"parse a csv file","code":"parse()","eval_score":6}\n';
    const body = bytes(first, '{"task":"bad ', [0xc3, 0x28], '","code":"x","eval_score":6}\n');
    const res = await send('POST', '/v1/import', body, 'application/x-ndjson');
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toContain(`at byte offset ${Buffer.byteLength(first) + Buffer.byteLength('{"task":"bad ')}`);
    expect(await stored()).toBe(0);
  });

  it('well-formed multi-byte text (CJK, emoji, combining marks) is stored exactly as sent', async () => {
    const task = 'Traduire « café » — 日本語のテキスト 👩‍💻 e\u0301';
    const res = await send('POST', '/v1/learn', bytes(JSON.stringify({ task, code: 'ok()', eval_score: 7 })), 'application/json; charset=latin1');
    expect(res.statusCode, res.body).toBe(200);
    expect((await t.call('GET', '/v1/export')).json().records.map((r: { task: string }) => r.task)).toEqual([task]);
  });
});

describe('firstInvalidUtf8Offset', () => {
  it('agrees with a strict decoder on every byte string of length 1 to 3 drawn from edge bytes', () => {
    const edges = [0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff];
    const strict = new TextDecoder('utf-8', { fatal: true });
    const valid = (b: Uint8Array) => {
      try {
        strict.decode(b);
        return true;
      } catch {
        return false;
      }
    };
    const check = (b: Uint8Array) => expect(firstInvalidUtf8Offset(b) === -1, Buffer.from(b).toString('hex')).toBe(valid(b));
    for (const a of edges) {
      check(Uint8Array.of(a));
      for (const b of edges) {
        check(Uint8Array.of(a, b));
        for (const c of edges) check(Uint8Array.of(a, b, c));
      }
    }
    expect(firstInvalidUtf8Offset(Buffer.from('😀 ok', 'utf8'))).toBe(-1);
    expect(firstInvalidUtf8Offset(Uint8Array.of(0x41, 0xf0, 0x9f, 0x98, 0x41))).toBe(1);
  });
});
