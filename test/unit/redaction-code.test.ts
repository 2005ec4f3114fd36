import { describe, expect, it } from 'vitest';
import { REDACTED, redact } from '../../src/core/redaction.js';

/**
 * Redaction replaces secret VALUES and never code: a corpus of real-looking secrets (each
 * must lose its value) and of ordinary code and prose whose `key=`, `token=`, `password=`
 * are followed by identifiers, calls, expressions and short literals (each must come back
 * byte for byte). Secrets are assembled from pieces so the repository holds none.
 */
const OPENAI = 'sk-' + 'proj-' + 'Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56';
const GITHUB = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
const AWS_ID = 'AKIA' + 'IOSFODNN7EXAMPLE';
const AWS_SECRET = 'wJalrXUtnFEMI' + '/K7MDENG/bPxRfi' + 'CYEXAMPLEKEY';
const SLACK_BOT = 'xoxb-' + '2048' + '1234567-' + '4096' + '7654321-' + 'aBcDeFgHiJkLmNoPqRsTuVwX';
const SLACK_USER = 'xoxp-' + '1111111111-' + '2222222222-' + '3333333333-' + 'abcdef0123456789';
const STRIPE = 'sk_' + 'live_' + '51H8xQ2eZvKYlo2C8Jd9Rk3T';
const RANDOM_40 = 'Q7v' + 'Zp3Lk9Xw' + 'T2mRb8Nc4' + 'Yh6Gf1Dq5' + 'Js0EuWa7Hx';
const PEM_BODY = 'MIIEpAIBAAKCAQEA' + '3Tz2mr7SZiAMfQyuvBjM9Oi\nZ1BjP5CE8Wm' + 'ZrUNxHr1QxwL4mNb9\nAbCdEf==';
const PEM = `-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}\n-----END RSA PRIVATE KEY-----`;
const OPENSSH = `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA${'Bm9uZQ'}AAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----`;

describe('redaction: real secrets are redacted', () => {
  it.each([
    ['provider key', `client = OpenAI(api_key="${OPENAI}")`, OPENAI],
    ['provider key as a keyword argument value', `OpenAI(api_key=${OPENAI})`, OPENAI],
    ['code-host token', `git clone https://${GITHUB}@github.com/o/r.git`, GITHUB],
    ['cloud key id', `aws_access_key_id = ${AWS_ID}`, AWS_ID],
    ['cloud secret key (high entropy after a credential name)', `aws_secret_access_key = ${AWS_SECRET}`, AWS_SECRET],
    ['cloud secret key quoted', `AWS_SECRET_ACCESS_KEY="${AWS_SECRET}"`, AWS_SECRET],
    ['Slack bot token', `slack = WebClient(token="${SLACK_BOT}")`, SLACK_BOT],
    ['Slack user token, bare in prose', `use ${SLACK_USER} for the bot`, SLACK_USER],
    ['Stripe key', `stripe.api_key = "${STRIPE}"`, STRIPE],
    ['random 40-character token on its own', `export SESSION=${RANDOM_40}`, RANDOM_40],
    ['random token after a plain `token=` in prose', `call it with token=${RANDOM_40} please`, RANDOM_40],
    ['password in a database URL', 'engine = create_engine("postgresql://admin:s3cr3t-Pa55@db.internal:5432/app")', 's3cr3t-Pa55'],
    ['password in a redis URL without a user', 'REDIS_URL=redis://:hunter2hunter2@cache:6379/0', 'hunter2hunter2'],
    ['PEM private key', `key = """${PEM}"""`, PEM_BODY],
    ['OpenSSH private key', OPENSSH, 'b3BlbnNzaC1rZXktdjEAAAAA'],
    ['private key cut before its END line', `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}`, PEM_BODY.slice(0, 20)],
    ['JSON-escaped private key', JSON.stringify({ private_key: PEM }), 'MIIEpAIBAAKCAQEA'],
    ['password literal in code', 'db.connect(user="app", password="correct horse battery staple")', 'correct horse'],
    ['password written out in prose', 'log in with password=hunter2 and retry', 'hunter2'],
    ['password with symbols', 'PASSWORD: p@ss!w0rd#', 'p@ss!w0rd#'],
    ['env line', 'DB_PASSWORD=letmein', 'letmein'],
    ['env line, plain token name', 'GITHUB_TOKEN=abcdefgh', 'abcdefgh'],
    ['YAML line', 'database:\n  password: letmein\n', 'letmein'],
    ['command-line flag', 'service learn --token=abc123 --verbose', 'abc123'],
    ['URL query', 'GET /v1/x?api_key=abc&page=2', 'api_key=abc'],
    ['credential-named literal', 'const apiKey = "abc";', '"abc"'],
    ['secret literal', "app.config['SECRET_KEY'] = 'dev'", "'dev'"],
    ['client secret', 'client_secret: "c2VjcmV0"', 'c2VjcmV0'],
    ['long random literal after a plain `key`', `headers = {"key": "${RANDOM_40.slice(0, 24)}"}`, RANDOM_40.slice(0, 24)],
  ])('%s', (_name, input, secret) => {
    const { text, counts } = redact(input);
    expect(text).not.toContain(secret);
    expect(text).toContain(REDACTED);
    expect(Object.keys(counts).length).toBeGreaterThan(0);
    // Redacting again changes nothing.
    expect(redact(text)).toEqual({ text, counts: {} });
  });

  it('keeps what surrounds the value: scheme, user, host; key headers', () => {
    expect(redact('postgres://admin:s3cr3t@db:5432/app').text).toBe(`postgres://admin:${REDACTED}@db:5432/app`);
    expect(redact(PEM).text).toBe(`-----BEGIN RSA PRIVATE KEY-----${REDACTED}-----END RSA PRIVATE KEY-----`);
    expect(redact(PEM).counts).toEqual({ private_key: 1 });
    expect(redact(`t ${SLACK_BOT}`).counts).toEqual({ service_token: 1 });
    expect(redact(`t ${RANDOM_40}`).counts).toEqual({ high_entropy_secret: 1 });
  });
});

describe('redaction: ordinary code and prose stay byte for byte', () => {
  it.each([
    // the reported cases
    'd = dict(key=sum)',
    'connect with key=sum',
    // identifiers, calls, expressions after key= / token= / password=
    'sorted(words, key=len)',
    'max(scores, key=scores.get)',
    'heapq.nlargest(3, items, key=lambda x: x[1])',
    'groups = itertools.groupby(rows, key=operator.itemgetter(0))',
    'login(user, password=pw)',
    'login(user, password=user_password)',
    'client = Client(token=api_token, timeout=30)',
    'requests.get(url, headers=h, auth=(user, password))',
    'key = row[0]',
    'key = k1',
    'token = tokens[i]',
    'token = next(it)',
    'password = getpass.getpass()',
    'password = pw2',
    'key = prefix + suffix',
    'for key, value in d.items():\n    key=key.strip()',
    'result = {key: value for key, value in pairs}',
    'd = dict(\n    key=sum,\n    token=tok,\n)',
    'def f(key=None, token=DEFAULT_TOKEN, password=""):',
    'class Config:\n    token: str\n    api_key: Optional[str] = None\n    password: str = ""',
    'interface Options {\n  token: string;\n  key: number;\n}',
    'const { key, token } = props;',
    'el.setAttribute("key", key)',
    // short literals after plain key / token
    'd.get(key="name")',
    'df.sort_values(by="age", key="col")',
    'tokenizer = Tokenizer(pad_token="<pad>", eos_token="</s>")',
    'cache_key = "users"',
    'dict(key=3, token=0)',
    'x = {"key": "id", "token": "eos"}',
    // prose
    'Explain what key=sum does when passed to sorted.',
    'The token: a word in the input; the key: the sort order.',
    'Set password: at least 12 characters.',
    'Use the key argument: key=str.lower sorts case-insensitively.',
    // placeholders and templates in URLs
    'url = f"postgresql://{user}:{password}@{host}/{db}"',
    'DATABASE_URL=postgres://user:${DB_PASSWORD}@db:5432/app',
    'dsn = "mysql://%(user)s:%(pw)s@localhost/test"',
    // long but not random
    'alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"',
    'path = "src/components/UserProfile2Card/index.test.tsx"',
    'def test_convert_to_base64_string_with_utf8_input_2():',
    'I have a key: the answer is 42.',
  ])('%s', (text) => {
    expect(redact(text)).toEqual({ text, counts: {} });
  });
});
