/** GET /v1/patterns/{key}/history (+): skill tags and recent eval observations of one pattern. */
import { describe, expect, it } from 'vitest';
import { learnBody, serversClosedAfterEach } from './helpers.js';

const startServer = serversClosedAfterEach();

describe('GET /v1/patterns/{key}/history', () => {
  it('answers the tags (sorted) and the eval observations newest first, and changes nothing', async () => {
    const t = await startServer();
    const task = 'Rotate the nginx access logs every night and keep two weeks';
    const first = (await t.call('POST', '/v1/learn', learnBody(task, { eval_score: 6 }))).json();
    const second = (await t.call('POST', '/v1/learn', learnBody(task, { eval_score: 9 }))).json();
    expect(second.pattern_key).toBe(first.pattern_key);
    const key = encodeURIComponent(first.pattern_key);
    expect((await t.call('POST', '/v1/skills/register', { pattern_key: first.pattern_key, skills: ['nginx', 'logrotate'] })).statusCode).toBe(200);

    const before = (await t.call('GET', '/v1/export')).body;
    const history = await t.call('GET', `/v1/patterns/${key}/history`);
    expect(history.statusCode).toBe(200);
    expect(history.json()).toEqual({ pattern_key: first.pattern_key, skills: ['logrotate', 'nginx'], eval_scores: [9, 6] });
    expect((await t.call('GET', '/v1/export')).body).toBe(before);
  });

  it('404 for a pattern that does not exist, 422 for a key that is not one', async () => {
    const t = await startServer();
    const missing = await t.call('GET', `/v1/patterns/${encodeURIComponent('patterns/nothinghere0')}/history`);
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('not_found');
    const bad = await t.call('GET', '/v1/patterns/..%2Fetc/history');
    expect(bad.statusCode).toBe(422);
  });
});
