import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { learnBody, startServer, type TestServer } from './helpers.js';

/** Learn stores code that holds no secret byte for byte: redaction takes values, not code. */
describe('learn with redaction on: code is not a secret', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startServer();
  });
  afterAll(async () => {
    await t.close();
  });

  const stored = async (key: string) => (await t.call('GET', '/v1/export')).json().records.find((r: { key: string }) => r.key === key);

  it('keeps `key=sum`, `key=len` and `password=pw` as written, in task and code', async () => {
    const task = 'connect with key=sum and sort by key=len';
    const code = 'd = dict(key=sum)\nprint(sorted(words, key=len))\nclient = login(user, password=pw, token=session_token)\n';
    const res = await t.call('POST', '/v1/learn', learnBody(task, { code, output: 'key=sum' }));
    expect(res.statusCode).toBe(200);
    expect(res.json()).not.toHaveProperty('redacted');
    const record = await stored(res.json().pattern_key);
    expect(record).toMatchObject({ task, code, output: 'key=sum', redacted: false });
    expect(await t.app.deps.storage.audit.list({ kind: 'PII_REDACTED', limit: 10 })).toHaveLength(0);
  });

  it('still takes the secret out of the same kind of line', async () => {
    const url = 'postgresql://app:' + 'Xk9' + '-pw-7Qz' + '@db:5432/prod';
    const code = `d = dict(key=sum)\nengine = create_engine("${url}")\nlogin(user, password="hunter2hunter2")\n`;
    const res = await t.call('POST', '/v1/learn', learnBody('open the production database', { code }));
    expect(res.json()).toMatchObject({ stored: true, redacted: true });
    const record = await stored(res.json().pattern_key);
    expect(record.code).toBe('d = dict(key=sum)\nengine = create_engine("postgresql://app:[REDACTED]@db:5432/prod")\nlogin(user, password="[REDACTED]")\n');
  });
});
