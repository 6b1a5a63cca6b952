import { strict as assert } from 'node:assert';
import { SecretRedactor, secretId, type RedactionKind, type RedactionResult } from '../../src/core/redact';

const redactor = new SecretRedactor();

/*
 * Every fake secret is built at run time, so no secret-shaped literal sits in
 * the repository (and secret scanners stay quiet about this file).
 */

/** Deterministic pseudo-random strings from a seed (a small LCG). */
function rng(seed: number): (alphabet: string, length: number) => string {
  let state = seed >>> 0 || 1;
  return (alphabet, length) => {
    let out = '';
    for (let i = 0; i < length; i++) {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      out += alphabet[(state >>> 8) % alphabet.length];
    }
    return out;
  };
}
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const ALNUM = UPPER + LOWER + DIGITS;
const B64URL = ALNUM + '-_';
const rand = rng(20240601);
const alnum = (n: number): string => rand(ALNUM, n);

/** Deterministic pseudo-random integers below `bound`. */
function rngInt(seed: number): (bound: number) => number {
  let state = seed >>> 0 || 1;
  return (bound) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state >>> 8) % bound;
  };
}

function b64url(json: object): string {
  return Buffer.from(JSON.stringify(json)).toString('base64url');
}

function pemBody(lines: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(rand(ALNUM + '+/', 64));
  out.push(rand(ALNUM, 20) + '==');
  return out;
}

function privateKey(type: string, lines = 8): { pem: string; body: string[] } {
  const label = type ? `${type} PRIVATE KEY` : 'PRIVATE KEY';
  const body = pemBody(lines);
  return { pem: [`-----BEGIN ${label}-----`, ...body, `-----END ${label}-----`].join('\n'), body };
}

const PLACEHOLDER = /\[REDACTED:([a-z-]+):([0-9a-f]{6})\]/g;

/** Redacts `text`, checks the invariants every result must satisfy, and returns it. */
function check(text: string): RedactionResult {
  const r = redactor.redact(text);
  assert.equal(redactor.containsSecret(text), r.redactions.length > 0, 'containsSecret agrees with redact');
  let last = 0;
  for (const x of r.redactions) {
    assert.ok(x.start >= last && x.end > x.start && x.end <= text.length, 'sorted, non-overlapping, inside the text');
    assert.equal(x.id, secretId(text.slice(x.start, x.end)), 'the id is the hash of the original value');
    last = x.end;
  }
  assert.equal(redactor.redact(r.text).text, r.text, 'idempotent');
  return r;
}

/** Asserts that `secret` (inside `text`) is redacted as `kind` and appears nowhere in the output. */
function expectRedacted(text: string, secret: string, kind: RedactionKind): string {
  const r = check(text);
  assert.ok(!r.text.includes(secret), `secret survived in: ${r.text}`);
  const at = text.indexOf(secret);
  const hit = r.redactions.find((x) => x.start <= at && x.end >= at + secret.length);
  assert.ok(hit, `no redaction covers the secret in: ${text}`);
  assert.equal(hit.kind, kind, `kind for ${JSON.stringify(text)}`);
  assert.ok(r.text.includes(`[REDACTED:${kind}:${hit.id}]`), r.text);
  return r.text;
}

function expectUntouched(text: string): void {
  const r = check(text);
  assert.deepEqual(r.redactions, [], `unexpected redaction in ${JSON.stringify(text)}: ${r.text}`);
  assert.ok(r.text === text, 'the same string is returned');
  assert.equal(redactor.containsSecret(text), false);
}

describe('redact: detection', () => {
  it('PEM private keys (RSA, OPENSSH, EC, PKCS#8, encrypted, PGP), multi-line, no body line survives', () => {
    for (const type of ['RSA', 'OPENSSH', 'EC', '', 'ENCRYPTED', 'DSA']) {
      const { pem, body } = privateKey(type);
      const text = `Here is the key:\n${pem}\nand some text after.`;
      const r = check(text);
      assert.equal(r.redactions.length, 1, type);
      assert.equal(r.redactions[0]!.kind, 'private-key');
      assert.equal(text.slice(r.redactions[0]!.start, r.redactions[0]!.end), pem, 'offsets point at the original key');
      for (const line of body) assert.ok(!r.text.includes(line), `a body line survived (${type})`);
      assert.ok(!r.text.includes('PRIVATE KEY'), r.text);
      assert.match(r.text, /^Here is the key:\n\[REDACTED:private-key:[0-9a-f]{6}\]\nand some text after\.$/);
    }
    const pgp = ['-----BEGIN PGP PRIVATE KEY BLOCK-----', '', ...pemBody(4), '-----END PGP PRIVATE KEY BLOCK-----'].join('\n');
    assert.equal(check(pgp).text.includes('PGP'), false);
  });

  it('private keys inside JSON strings (escaped newlines) and truncated keys without an END line', () => {
    const { pem, body } = privateKey('RSA');
    const json = JSON.stringify({ type: 'service_account', private_key: pem + '\n' });
    const r = check(json);
    for (const line of body) assert.ok(!r.text.includes(line), 'a body line survived in JSON');
    assert.ok(r.redactions.some((x) => x.kind === 'private-key'));

    const truncated = ['-----BEGIN OPENSSH PRIVATE KEY-----', ...body.slice(0, 5), '... [output truncated]'].join('\n');
    const t = check(truncated);
    for (const line of body.slice(0, 5)) assert.ok(!t.text.includes(line), 'a body line of a truncated key survived');
    assert.ok(t.text.endsWith('\n... [output truncated]'), t.text);

    const encrypted = ['-----BEGIN RSA PRIVATE KEY-----', 'Proc-Type: 4,ENCRYPTED', 'DEK-Info: AES-128-CBC,' + rand('0123456789ABCDEF', 32), '', ...body].join('\n');
    const e = check(encrypted + '\n\nNext paragraph.');
    for (const line of body) assert.ok(!e.text.includes(line), 'a body line of an encrypted truncated key survived');
    assert.ok(e.text.endsWith('Next paragraph.'));
  });

  it('the body of a key without its BEGIN line, its lines joined by spaces, newlines or escapes, is key material', () => {
    const body = pemBody(6);
    // gpg quoting what it could not read; an export that turned the key's line breaks into spaces.
    for (const text of [`gpg: invalid armor header: ${body.join(' ')}\ngpg: key 8E1F: secret key imported`, `-----BEGIN PGP PRIVATE KEY BLOCK-----  ${body.join(' ')}`, JSON.stringify({ out: body.join('\n') })]) {
      const r = check(text);
      for (const line of body) assert.ok(!r.text.includes(line), `a body line survived in ${text.slice(0, 40)}`);
      assert.ok(r.redactions.every((x) => x.kind === 'private-key'), JSON.stringify(r.redactions));
    }
    assert.ok(check(`gpg: invalid armor header: ${body.join(' ')}\ngpg: key 8E1F: secret key imported`).text.endsWith('\ngpg: key 8E1F: secret key imported'));
    // A public key's body under its BEGIN line is no secret; one line alone, two hex digests side by side and a
    // 76-column base64 dump are not a key's body.
    assert.equal(check(`-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n${body.join('\n')}`).redactions.length, 0);
    const digest = (): string => rand('0123456789abcdef', 64);
    for (const text of [`token line: ${body[0]}`, `${digest()}  a.tar.gz\n${digest()}  b.tar.gz`, [rand(ALNUM + '+/', 76), rand(ALNUM + '+/', 76)].join('\n')]) assert.equal(check(text).redactions.length, 0, text);
  });

  it('AWS access key ids and labelled secret keys', () => {
    const id = 'AKIA' + rand(UPPER + DIGITS, 16);
    expectRedacted(`aws_access_key_id = ${id}`, id, 'aws-key');
    const sts = 'ASIA' + rand(UPPER + DIGITS, 16);
    expectRedacted(`"AccessKeyId": "${sts}",`, sts, 'aws-key');
    const secret = rand(ALNUM + '/+', 40);
    const out = expectRedacted(`aws_secret_access_key = ${secret}\n`, secret, 'aws-key');
    assert.match(out, /^aws_secret_access_key = \[REDACTED:aws-key:[0-9a-f]{6}\]\n$/);
    expectRedacted(`export AWS_SECRET_ACCESS_KEY="${secret}"`, secret, 'aws-key');
  });

  it('GitHub tokens (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)', () => {
    for (const prefix of ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_']) {
      const token = prefix + alnum(36);
      expectRedacted(`git push https://${token}@github.com/org/repo.git`, token, 'token');
      expectRedacted(`token ${token}`, token, 'token');
    }
    expectRedacted('GITHUB_TOKEN=ghp_' + 'A'.repeat(36), 'ghp_' + 'A'.repeat(36), 'token');
    const pat = 'github_pat_' + alnum(22) + '_' + alnum(59);
    expectRedacted(`Using ${pat} for the API`, pat, 'token');
  });

  it('OpenAI / Anthropic style keys (sk-, sk-proj-, sk-ant-)', () => {
    const legacy = 'sk-' + alnum(48);
    expectRedacted(`OPENAI_API_KEY=${legacy}`, legacy, 'api-key');
    const proj = 'sk-proj-' + rand(B64URL, 120);
    expectRedacted(`client = OpenAI(api_key="${proj}")`, proj, 'api-key');
    const ant = 'sk-ant-api03-' + rand(B64URL, 93) + 'AA';
    expectRedacted(`x-api-key: ${ant}`, ant, 'api-key');
    expectRedacted(`{"key":"${ant}"}`, ant, 'api-key');
  });

  it('Slack, Google, Stripe and other vendor tokens', () => {
    for (const p of ['xoxb', 'xoxp', 'xoxa', 'xoxo', 'xoxr', 'xoxs']) {
      const token = `${p}-${rand(DIGITS, 12)}-${rand(DIGITS, 13)}-${alnum(24)}`;
      expectRedacted(`SLACK_TOKEN: ${token}`, token, 'token');
    }
    const google = 'AIza' + rand(B64URL, 35);
    expectRedacted(`https://maps.googleapis.com/maps/api/geocode/json?key=${google}&address=x`, google, 'api-key');
    for (const p of ['sk_live_', 'rk_live_', 'pk_live_', 'sk_test_']) {
      const key = p + alnum(24);
      expectRedacted(`stripe.api_key = '${key}'`, key, 'api-key');
      expectRedacted(`Stripe key ${key} loaded`, key, 'api-key');
    }
    const glpat = 'glpat-' + rand(B64URL, 20);
    expectRedacted(`GITLAB ${glpat}`, glpat, 'token');
    const npm = 'npm_' + alnum(36);
    expectRedacted(`//registry.npmjs.org/:_authToken=${npm}`, npm, 'token');
  });

  it('bearer tokens and Authorization headers', () => {
    const token = rand(B64URL, 40);
    const out = expectRedacted(`curl -H "Authorization: Bearer ${token}" https://api.example.com`, token, 'token');
    assert.ok(out.includes('Authorization: Bearer [REDACTED:token:'), out);
    expectRedacted(`authorization: Basic ${Buffer.from('admin:' + alnum(12)).toString('base64')}`, Buffer.from('admin:').toString('base64').slice(0, 6), 'token');
    const ghToken = alnum(40);
    expectRedacted(`{"Authorization": "token ${ghToken}"}`, ghToken, 'token');
    const bare = alnum(30) + '9';
    expectRedacted(`sent request with Bearer ${bare} attached`, bare, 'token');
  });

  it('JWTs', () => {
    const jwt = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ sub: '1234567890', name: 'Jane', iat: 1516239022 })}.${rand(B64URL, 43)}`;
    expectRedacted(`cookie: session=${jwt}; Path=/`, jwt, 'jwt');
    expectRedacted(`Authorization: Bearer ${jwt}`, jwt, 'jwt');
    expectRedacted(`{"id_token":"${jwt}"}`, jwt, 'jwt');
    const unsigned = `${b64url({ alg: 'none' })}.${b64url({ sub: 'abc', admin: true })}.`;
    expectRedacted(`token ${unsigned} end`, unsigned, 'jwt');
  });

  it('passwords in assignments, JSON, YAML, flags and env files; the label is kept', () => {
    const pw = 'Tr0ub4dor&3';
    assert.equal(redactor.redact(`password=${pw}`).text, `password=[REDACTED:password:${secretId(pw)}]`);
    assert.equal(redactor.redact(`{"password": "${pw}"}`).text, `{"password": "[REDACTED:password:${secretId(pw)}]"}`);
    assert.equal(redactor.redact(`PASSWORD: ${pw}`).text, `PASSWORD: [REDACTED:password:${secretId(pw)}]`);
    assert.equal(redactor.redact(`mysql --password ${pw} -u root`).text, `mysql --password [REDACTED:password:${secretId(pw)}] -u root`);
    const cases = [
      `--password=${pw}`,
      `passwd=${pw}`,
      `https://example.com/login?user=bob&pwd=${pw}&next=/`,
      `DB_PASSWORD=${pw}`,
      `export MYSQL_ROOT_PASSWORD='${pw}'`,
      `  password: "${pw}"`,
      `spring.datasource.password=${pw}`,
      `conn = connect(host="db", password="${pw}")`,
      `password := "${pw}"`,
      `smtpPass: ${pw}`,
      `Server=db;Database=app;User Id=sa;Password=${pw};`,
      `"{\\"password\\":\\"${pw}\\"}"`,
      `PGPASSWORD=${pw} psql -h db`,
      `Enter your password: ${pw}`,
    ];
    for (const text of cases) expectRedacted(text, pw, 'password');
    const phrase = 'correct horse battery staple';
    expectRedacted(`passphrase = "${phrase}"`, phrase, 'password');
  });

  it('credentials in URLs and database connection strings (user and host kept)', () => {
    const pw = alnum(16);
    assert.equal(redactor.redact(`postgres://app:${pw}@db.internal:5432/app`).text, `postgres://app:[REDACTED:connection-string:${secretId(pw)}]@db.internal:5432/app`);
    expectRedacted(`DATABASE_URL="postgresql://admin:${pw}@localhost/db"`, pw, 'connection-string');
    expectRedacted(`mongodb+srv://root:${pw}@cluster0.mongodb.net/test?retryWrites=true`, pw, 'connection-string');
    expectRedacted(`REDIS_URL=redis://:${pw}@cache:6379/0`, pw, 'connection-string');
    expectRedacted(`mysql://u:${pw}@h/d`, pw, 'connection-string');
    const out = expectRedacted(`git clone https://bob:${pw}@git.example.com/repo.git`, pw, 'password');
    assert.ok(out.includes('https://bob:[REDACTED:password:') && out.includes('@git.example.com/repo.git'), out);
    expectRedacted(`curl -u admin:${pw} https://api.example.com/v1`, pw, 'password');
    expectRedacted(`curl --user "deploy:${pw}" -X POST https://ci.example.com`, pw, 'password');
    const withAt = 'p@ss' + alnum(6);
    expectRedacted(`amqp://guest:${withAt}@rabbit/`, withAt, 'connection-string');
  });

  it('generic api_key / apikey / secret / token / access_token / client_secret assignments', () => {
    const v = alnum(32);
    const cases: Array<[string, RedactionKind]> = [
      [`api_key=${v}`, 'api-key'],
      [`apikey: "${v}"`, 'api-key'],
      [`"x-api-key": "${v}"`, 'api-key'],
      [`secret = '${v}'`, 'api-key'],
      [`CLIENT_SECRET=${v}`, 'api-key'],
      [`"client_secret":"${v}"`, 'api-key'],
      [`jwtSecret: ${v}`, 'api-key'],
      [`SECRET_KEY = "${v}"`, 'api-key'],
      [`token=${v}`, 'token'],
      [`access_token: ${v}`, 'token'],
      [`{"refresh_token": "${v}"}`, 'token'],
      [`curl "https://api.example.com/v1?access_token=${v}&x=1"`, 'token'],
      [`--token ${v}`, 'token'],
    ];
    for (const [text, kind] of cases) expectRedacted(text, v, kind);
    const out = redactor.redact(`api_key=${v}`).text;
    assert.equal(out, `api_key=[REDACTED:api-key:${secretId(v)}]`);
  });

  it('e-mail addresses', () => {
    for (const email of ['jane.doe@acme-corp.io', 'j.smith+work@mail.example.co.uk', 'ops_team@sub.domain.dev', 'alice@example.com']) {
      expectRedacted(`Contact ${email} for access.`, email, 'email');
      expectRedacted(`Author: Someone <${email}>`, email, 'email');
    }
    expectRedacted('mailto:bob@corp.example.org', 'bob@corp.example.org', 'email');
    expectRedacted('"email":"x.y@z.io"', 'x.y@z.io', 'email');
  });

  it('offsets point at the original text and several secrets are replaced in order', () => {
    const a = 'ghp_' + alnum(36);
    const b = 'AKIA' + rand(UPPER + DIGITS, 16);
    const pw = 'Sup3r$ecret!';
    const text = `first ${a} then aws ${b}, password=${pw} and mail me@here.org.`;
    const r = check(text);
    assert.deepEqual(
      r.redactions.map((x) => [x.kind, text.slice(x.start, x.end)]),
      [['token', a], ['aws-key', b], ['password', pw], ['email', 'me@here.org']],
    );
    assert.match(r.text, /^first \[REDACTED:token:\w{6}\] then aws \[REDACTED:aws-key:\w{6}\], password=\[REDACTED:password:\w{6}\] and mail \[REDACTED:email:\w{6}\]\.$/);
  });
});

describe('redact: false positives', () => {
  const commit = rand('0123456789abcdef', 40);
  const cases = [
    '',
    'The quick brown fox jumps over the lazy dog.',
    'Please reset your password and choose a new password.',
    'Forgot password? Click "Reset password" to get a link.',
    'The password field is required. Password: must be at least 8 characters.',
    `commit ${commit}\nAuthor-Date: 2024-05-01\n\n    Fix the password prompt`,
    `${commit.slice(0, 7)} (HEAD -> main) Merge ${commit}`,
    'id: 123e4567-e89b-12d3-a456-426614174000',
    'uuid=9f1c2d3e-4b5a-6789-abcd-ef0123456789',
    'src/core/auth/password-reset.ts:42:7 - error TS2322',
    '/home/user/.ssh/id_rsa.pub  C:\\Users\\me\\secrets\\token.txt',
    'version 1.2.3-beta.4+build.5, node v20.11.1, typescript@5.4.5, lodash@4.17.21',
    'npm install @types/node@20 --save-dev',
    'password=<your-password>  api_key=<your-key>  token: <token>',
    'API_KEY=xxx  PASSWORD=***  secret=xxxxxxxxxxxx  token=********',
    'api_key=${API_KEY}  password=$DB_PASSWORD  token: %TOKEN%  secret: {{ secret }}',
    'const apiKey = process.env.API_KEY; const pw = os.environ["DB_PASSWORD"];',
    'password: process.env.DB_PASSWORD,\ntoken: config.auth.token,',
    'Client IP [REDACTED_IP] connected, key [REDACTED:api-key:3f9a1c] and password=[REDACTED:password:ab12cd]',
    'interface User { password: string; token?: string; apiKey: ApiKeyType }',
    'if (password === confirm) { return token == null; }',
    'const token = await getToken(); const secret = loadSecret(path);',
    'password = hash_password(raw); token = jwt.sign(payload, secret)',
    'access_token = data["access_token"]; refresh_token: refreshToken,',
    '"password": {"type": "string", "minLength": 8}',
    'password: ${{ secrets.DB_PASSWORD }}',
    'use the --password flag or the --token option',
    'git@github.com:org/repo.git and ssh://git@github.com/org/repo',
    'logo@2x.png icon@3x.jpg user@localhost admin@host',
    'https://example.com:8443/path?x=1#frag and http://localhost:3000/',
    'sk-learn, task-runner, disk-usage, AKIA-like words, eyJust kidding',
    'Bearer authentication uses a bearer token in the header.',
    'Authorization: Bearer $TOKEN  Authorization: Bearer <token>',
    'max_tokens: 4096, total_tokens=12, tokenizer=o200k_base',
    'monkey keyboard keys bypass: true compass: north',
    'token: null  secret: true  password: None  api_key: ""',
    'The -----BEGIN CERTIFICATE----- block is public.',
    'passwordless login; password_reset_url=https://example.com/reset',
    'Password for \'https://github.com\': ',
    'x = a@b; matrix = x@W.T',
    'docker run -u 1000:1000 -p 8080:80 image; git commit -u',
    'curl -u $USER:$API_TOKEN https://api.example.com',
    'read -s -p "Password: " PASSWORD; echo "ok"',
    'echo "Enter password: "; read pw; echo "done"',
    "const msg = 'token: ' + t + 'abc'; print(\"Password: \" + pw)",
    'type Config struct { Password string `json:"password"` }',
    `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${rand(ALNUM + '+/', 43)} dev@laptop`,
  ];
  for (const text of cases) {
    it(`leaves untouched: ${JSON.stringify(text.slice(0, 70))}`, () => expectUntouched(text));
  }
});

describe('redact: placeholders', () => {
  it('the same secret gets the same placeholder; different secrets get different ones', () => {
    const a = 'ghp_' + alnum(36);
    const b = 'ghp_' + alnum(36);
    const r = redactor.redact(`${a} and again ${a}, then ${b}`);
    const ids = [...r.text.matchAll(PLACEHOLDER)].map((m) => m[0]);
    assert.equal(ids.length, 3);
    assert.equal(ids[0], ids[1]);
    assert.notEqual(ids[0], ids[2]);
    assert.equal(redactor.redact(`token=${a}`).text, `token=${ids[0]}`, 'stable across calls and contexts');
    const pw1 = redactor.redact('password=hunter22').text;
    const pw2 = redactor.redact('DB_PASSWORD="hunter22"').text;
    assert.equal(pw1.slice(pw1.indexOf('[')), pw2.slice(pw2.indexOf('['), -1));
    assert.notEqual(redactor.redact('password=hunter22').text, redactor.redact('password=hunter23').text);
  });

  it('the placeholder reveals nothing of the secret', () => {
    const secret = 'sk-' + alnum(48);
    const out = redactor.redact(secret).text;
    assert.match(out, /^\[REDACTED:api-key:[0-9a-f]{6}\]$/);
    assert.ok(!out.includes(secret.slice(3, 9)));
  });

  it('is idempotent when secrets touch each other or their labels', () => {
    const { pem } = privateKey('EC', 2);
    const slack = 'xoxb-' + rand(DIGITS, 12) + '-' + alnum(24);
    const ghp = 'ghp_' + alnum(36);
    for (const text of [
      pem + slack,
      `${ghp}--password ${alnum(10)}1`,
      `-----BEGIN RSA PRIVATE KEY-----AIza${rand(B64URL, 35)}`,
      `-----BEGIN PRIVATE KEY-----jane@acme.io`,
      `password=jane@acme.iopostgres://eyJ${alnum(12)}.${alnum(10)}.${alnum(10)}`,
      `Authorization: secret--password eyJ${alnum(12)}.${alnum(10)}.${alnum(10)}`,
    ]) {
      const r = check(text);
      assert.ok(r.redactions.length > 0, text);
    }
    const r = check(pem + slack);
    assert.ok(!r.text.includes(slack), 'the token after the key is found too');
  });

  it('random mixtures of fragments keep every invariant', () => {
    const pick = rngInt(7);
    const fragments = [
      'password', 'password=', 'PASSWORD: ', '"password": "', '"', "'", ' ', '\n', '\\n', '\\"', ':', '=', '@', '://', 'postgres://', 'u:',
      'ghp_' + alnum(36), 'AKIA' + rand(UPPER + DIGITS, 16), 'sk-' + alnum(30), `eyJ${alnum(12)}.${alnum(10)}.${alnum(10)}`, 'token=', 'api_key: ',
      'secret', 'Bearer ', alnum(20) + '9', 'Authorization: ', 'jane@acme.io', '.com', '[REDACTED:token:abc123]', '[REDACTED_IP]',
      '-----BEGIN RSA PRIVATE KEY-----', '-----END RSA PRIVATE KEY-----', rand(ALNUM + '+/', 64), '--password ', 'curl -u ', 'a:b', '&', '/',
      alnum(5), alnum(9), '${X}', '<key>', '***', 'xoxb-' + alnum(20), 'AIza' + rand(B64URL, 35), '[', ']', '=', '==', ',', '(', '>',
      'whsec_' + alnum(24), 'Basic ', 'x=', 'jane@', 'acme.io', 'mongodb+srv://',
    ];
    for (let i = 0; i < 5000; i++) {
      const count = 1 + pick(12);
      let text = '';
      for (let k = 0; k < count; k++) text += fragments[pick(fragments.length)];
      check(text);
    }
  });

  it('is idempotent on a corpus mixing every kind', () => {
    const { pem } = privateKey('RSA');
    const jwt = `${b64url({ alg: 'RS256' })}.${b64url({ sub: 'x' })}.${rand(B64URL, 40)}`;
    const corpus = [
      pem,
      `Authorization: Bearer ${jwt}`,
      `password=${alnum(12)} and "api_key": "${alnum(30)}"`,
      `postgres://u:${alnum(10)}@db/x`,
      `ghp_${alnum(36)} sk-${alnum(48)} AIza${rand(B64URL, 35)} AKIA${rand(UPPER, 16)}`,
      'mail a.b@c.io, token=' + alnum(20),
    ].join('\n');
    const once = check(corpus);
    assert.equal(once.redactions.length, 11);
    const twice = redactor.redact(once.text);
    assert.ok(twice.text === once.text, 'the same string comes back');
    assert.deepEqual(twice.redactions, []);
    assert.equal(redactor.containsSecret(once.text), false);
  });
});

describe('redact: performance', function () {
  this.timeout(60_000);

  function time(label: string, text: string): number {
    const t0 = process.hrtime.bigint();
    const r = redactor.redact(text);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const t1 = process.hrtime.bigint();
    redactor.containsSecret(text);
    const msCheck = Number(process.hrtime.bigint() - t1) / 1e6;
    // eslint-disable-next-line no-console
    console.log(`      ${label}: ${(text.length / 1e6).toFixed(1)} MB, redact ${ms.toFixed(0)} ms (${r.redactions.length} redactions), containsSecret ${msCheck.toFixed(0)} ms`);
    return ms;
  }

  // These tests catch super-linear scanning (a backtracking pattern takes minutes to
  // hours on inputs this size), not speed: a linear scan takes about 1 s here, and the
  // bound leaves room for a loaded CI machine. Speed is the bench's business.
  const LINEAR_BOUND_MS = 20_000;

  function fill(unit: string, size: number): string {
    return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
  }

  it('a 20 MB input full of near-misses is scanned in linear time', () => {
    const nearMisses = [
      'ghp_' + 'A'.repeat(35) + ' ',
      'AKIA' + 'B'.repeat(15) + ' ',
      'sk-' + 'c'.repeat(19) + ' ',
      'eyJ' + 'd'.repeat(40) + '.' + 'e'.repeat(40) + ' ',
      'password password: is ',
      'token=short ',
      '"secret": "',
      'user@host ',
      'http://host:8080/x ',
      '-----BEGIN PUBLIC KEY-----\n-----BEGIN RSA PRIVATE KEY ',
      'Bearer abcdefghijklmnopq ',
      commitLike(),
      '123e4567-e89b-12d3-a456-426614174000 ',
      'xoxb- AIza- glpat- npm_ hf_ SG. ',
      '[REDACTED_IP] ',
      'authorization ',
      'apikey=process.env.API_KEY ',
      'docker run -u 1000:1000 ',
      'jane@localhost https://user@host.io/ ',
    ].join('');
    const text = fill(nearMisses, 20 * 1024 * 1024);
    const ms = time('mixed near-misses', text);
    assert.equal(redactor.redact(text.slice(0, 100_000)).redactions.length, 0, 'the near-misses are misses');
    assert.ok(ms < LINEAR_BOUND_MS, `took ${ms} ms`);
  });

  it('a 20 MB log with a secret every few kilobytes is scanned in linear time', () => {
    const line = 'INFO 2024-05-06T10:00:00Z worker-3 processed job 123e4567-e89b-12d3-a456-426614174000 in 42 ms (src/core/engine.ts:120)\n';
    const secrets = [`password=${alnum(12)}\n`, `Authorization: Bearer ${alnum(40)}\n`, `ghp_${alnum(36)}\n`, 'mail ops@acme.io\n'];
    const chunk = line.repeat(40);
    const parts: string[] = [];
    let size = 0;
    for (let i = 0; size < 20 * 1024 * 1024; i++) {
      const s = secrets[i % secrets.length]!;
      parts.push(chunk, s);
      size += chunk.length + s.length;
    }
    const ms = time('log with secrets', parts.join(''));
    assert.ok(ms < LINEAR_BOUND_MS, `took ${ms} ms`);
  });

  it('adversarial runs do not backtrack', () => {
    const size = 4 * 1024 * 1024;
    const inputs: Array<[string, string]> = [
      ['long run of word chars', 'a'.repeat(size)],
      ['run then @', 'a'.repeat(size) + '@x.io'],
      ['@ then long domain', 'a@' + 'b'.repeat(size)],
      ['a@ repeated', fill('a@', size)],
      ['dots and @', fill('a.', size) + '@b.co'],
      ['password= repeated', fill('password=', size)],
      ['token=" repeated', fill('token="', size)],
      ['token:\' repeated', fill("token:'x", size)],
      ['--password repeated', fill('--password ', size)],
      ['eyJ repeated', fill('eyJ', size)],
      ['eyJ segments without a third', fill('eyJaaaaaaaaaa.', size)],
      ['ghp_ run', 'ghp_' + 'A'.repeat(size)],
      ['ghp_ repeated', fill('ghp_', size)],
      [':// repeated', fill('://', size)],
      ['scheme://user:pass no @', fill('x://u:p', size)],
      ['BEGIN without END', fill('-----BEGIN RSA PRIVATE KEY-----\n', size)],
      ['BEGIN then base64 forever', '-----BEGIN PRIVATE KEY-----\n' + fill('QUFB\n', size)],
      ['keyword soup', fill('keypasstokensecretauthbearerpw', size)],
      ['Bearer repeated', fill('Bearer ', size)],
      ['AKIA run', 'AKIA' + 'A'.repeat(size)],
      ['sk- run', fill('sk-', size)],
      ['quotes', fill('"\'`', size)],
      ['[REDACTED repeated', fill('[REDACTED', size)],
      ['backslash quotes', fill('password="\\"', size)],
    ];
    let total = 0;
    for (const [label, text] of inputs) {
      const ms = time(label, text);
      total += ms;
      assert.ok(ms < LINEAR_BOUND_MS, `${label} took ${ms} ms`);
    }
  });
});

function commitLike(): string {
  return rand('0123456789abcdef', 40) + ' ';
}
