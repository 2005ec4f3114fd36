import { describe, expect, it } from 'vitest';
import { redactKeywordSecrets } from '../../src/core/redaction-keywords.js';

const P = '[REDACTED]';
const run = (text: string) => redactKeywordSecrets(text, P);

describe('keyword secrets: redacted', () => {
  it.each([
    ['password=hunter2', 'password=[REDACTED]'],
    ['TOKEN=abc', 'TOKEN=[REDACTED]'],
    ['secret=abc', 'secret=[REDACTED]'],
    ['KEY=abc', 'KEY=[REDACTED]'],
    ['PASSWORD=hunter2', 'PASSWORD=[REDACTED]'],
    ['Token: abc123', 'Token: [REDACTED]'],
    ['API_KEY: "abc"', 'API_KEY: "[REDACTED]"'],
    ['"password": "hunter2"', '"password": "[REDACTED]"'],
    ["{'secret': 'x y z'}", "{'secret': '[REDACTED]'}"],
    ['const apiKey = `abc`;', 'const apiKey = `[REDACTED]`;'],
    ['db.password = \'s3cr3t\'', 'db.password = \'[REDACTED]\''],
    ['--token=abc123 --verbose', '--token=[REDACTED] --verbose'],
    ['https://x.io/?api_key=abc&page=2', 'https://x.io/?api_key=[REDACTED]&page=2'],
    ['x-api-key: abc', 'x-api-key: [REDACTED]'],
    ['authToken := "t0k"', 'authToken := "[REDACTED]"'],
    ["'secret' => 'php'", "'secret' => '[REDACTED]'"],
    ['secretkey=abc123', 'secretkey=[REDACTED]'],
    ['accesstoken=zz9', 'accesstoken=[REDACTED]'],
    ['APIKEY=abc', 'APIKEY=[REDACTED]'],
    ['passwd=abc', 'passwd=[REDACTED]'],
    ['password=hunter2.', 'password=[REDACTED].'],
    ['the password: hunter2 works', 'the password: [REDACTED] works'],
    ['password="unterminated', 'password="[REDACTED]'],
  ])('%s', (input, expected) => {
    expect(run(input)).toEqual({ text: expected, count: 1 });
  });

  it('a YAML / env style whole line is redacted even when the value is one word', () => {
    expect(run('db:\n  password: letmein\n  user: bob').text).toBe('db:\n  password: [REDACTED]\n  user: bob');
    expect(run('- token: abc').text).toBe('- token: [REDACTED]');
  });

  it('counts each assignment', () => {
    // Mid-line, a plain `token=` followed by an identifier (`a1`) and a plain `key=` followed by
    // a short literal (`"c3"`) are code, not secrets; flags and credential names are.
    expect(run('--token=a1 secret=b2 api_key="c3"')).toEqual({ text: '--token=[REDACTED] secret=[REDACTED] api_key="[REDACTED]"', count: 3 });
    expect(run('token=a1 secret=b2 key="c3"')).toEqual({ text: 'token=a1 secret=[REDACTED] key="c3"', count: 1 });
  });
});

describe('keyword secrets: left alone', () => {
  it.each([
    // "key" must start a segment of the name: inside a word it is just letters.
    'monkey=banana',
    'turkey: sandwich',
    'hockey=3',
    'MONKEY=1',
    // the keyword must end the name
    'key_id=42 token_type=bearer',
    // code, not data
    'sorted(rows, key=lambda r: r[1])',
    'sorted(rows, key=itemgetter(1))',
    'connect(password=password, token=token)',
    'token=None',
    'client = Client(token=self.token)',
    'token=os.environ["TOKEN"]',
    'const key = process.env.KEY',
    '<li key={item.id}>',
    'if key == other:',
    // A plain lower-case `key` / `token` followed by an identifier is a statement
    // (`key=sum`), not a config line, even alone on its line.
    'key=abc',
    'token=abc',
    // placeholders and empty values
    'token=[REDACTED]',
    'password=<your password>',
    'password="" and key=\'\'',
    // prose with ":" and an ordinary word
    'The key: use caching wherever possible.',
    'One secret: patience is needed.',
    'no separator: password hunter2',
  ])('%s', (text) => {
    expect(run(text)).toEqual({ text, count: 0 });
  });
});
