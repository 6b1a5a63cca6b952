/**
 * Redaction coverage (issue 13): every provider format of the rule table and
 * the formats that need their context, each in the four places a secret
 * arrives — a user message, a tool call's input rendered as JSON (a heredoc),
 * a tool output, a line-numbered file read — plus personal numbers with
 * checksums, derived text (titles, keys, labels) and the false positives that
 * must stay untouched. Secrets are built at run time: none sits in the source.
 */
import { strict as assert } from 'node:assert';
import { defaultBudget } from '../../src/core/budget';
import { renderToolInput } from '../../src/core/tools';
import { ibanValid, luhn } from '../../src/core/personalData';
import { SecretRedactor } from '../../src/core/redact';
import { VENDOR_TOKEN_RULES } from '../../src/core/secretRules';
import { replay } from '../../src/core/replay';
import { CharRatioTokenCounter } from '../../src/core/tokens';
import { titleFromRecords } from '../../src/core/transcript';
import { ProtectedState } from '../../src/core/state';
import type { Part } from '../../src/core/types';
import { RecordBuilder } from './engineHarness';

const redactor = new SecretRedactor();

/** A deterministic string matching a (bounded, simple) regex body: classes, \w \d, literals, {n} {n,m}, optional groups skipped. */
function sample(body: string, seed: number): string {
  let state = seed;
  const pick = (alphabet: string): string => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return alphabet[(state >>> 8) % alphabet.length]!;
  };
  const expand = (cls: string): string => {
    let out = '';
    for (let i = 0; i < cls.length; i++) {
      const c = cls[i]!;
      if (c === '\\') {
        const d = cls[++i]!;
        out += d === 'w' ? 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_' : d === 'd' ? '0123456789' : d;
      } else if (cls[i + 1] === '-' && i + 2 < cls.length) {
        for (let k = c.charCodeAt(0); k <= cls.charCodeAt(i + 2); k++) out += String.fromCharCode(k);
        i += 2;
      } else out += c;
    }
    return out;
  };
  let out = '';
  for (let i = 0; i < body.length; ) {
    let alphabet: string;
    if (body.startsWith('(?:', i)) {
      // Optional groups are left out.
      i = body.indexOf(')?', i) + 2;
      continue;
    }
    if (body[i] === '[') {
      const close = body.indexOf(']', i + 2);
      alphabet = expand(body.slice(i + 1, close));
      i = close + 1;
    } else if (body[i] === '\\') {
      alphabet = expand(body.slice(i, i + 2));
      i += 2;
    } else {
      alphabet = body[i]!;
      i++;
    }
    let count = 1;
    const q = /^\{(\d+)(?:,(\d+))?\}/.exec(body.slice(i));
    if (q) {
      count = Math.max(Number(q[1]), alphabet.length === 1 && Number(q[1]) === 0 ? 0 : 1);
      i += q[0].length;
    }
    for (let k = 0; k < count; k++) out += pick(alphabet);
  }
  return out;
}

/** The four places a secret arrives, as the projected context renders them. */
function places(secret: string, line = `TOKEN=${secret}`): Record<string, string> {
  return {
    'user message': `Use this one: ${secret} for the deploy.`,
    'tool input heredoc': renderToolInput({ name: 'Bash', callId: 'c1', input: { command: `cat > .env <<'EOF'\n${line}\nEOF` } } as never),
    'heredoc, bare line': JSON.stringify({ command: `cat > creds <<EOF\n${secret}\nEOF` }),
    'tool output': `exported:\n${line}\ndone`,
    'file read': `     1\tconfig:\n     2\t  key: ${secret}\n     3\t  region: eu`,
  };
}

function assertHidden(text: string, secret: string, what: string): void {
  const out = redactor.redact(text).text;
  assert.ok(!out.includes(secret), `${what}: the secret survives in ${JSON.stringify(out.slice(0, 240))}`);
  // No long piece of it survives either (a clipped token must not leak its prefix and body).
  const piece = secret.slice(Math.max(0, secret.length - 16));
  if (piece.length >= 12) assert.ok(!out.includes(piece), `${what}: the end of the secret survives`);
}

describe('redaction coverage: provider tokens of the rule table', () => {
  for (const rule of VENDOR_TOKEN_RULES) {
    for (const prefix of rule.prefixes) {
      it(`${rule.id} (${prefix}…) in every place`, () => {
        const secret = prefix + sample(rule.body, prefix.length * 7919 + rule.id.length);
        for (const [where, text] of Object.entries(places(secret))) assertHidden(text, secret, `${rule.id} in a ${where}`);
      });
    }
  }
});

describe('redaction coverage: well-known formats after JSON escapes', () => {
  const alnum = (n: number, seed: number): string => sample(`[A-Za-z0-9]{${n}}`, seed);
  const cases: Record<string, string> = {
    'GitHub ghp_': `ghp_${alnum(36, 1)}`,
    'GitHub github_pat_': `github_pat_${alnum(22, 2)}_${alnum(59, 3)}`,
    'Anthropic sk-ant-api03-': `sk-ant-api03-${sample('[\\w-]{93}', 4)}AA`,
    'Stripe sk_live_': `sk_live_${alnum(24, 5)}`,
    'Stripe whsec_': `whsec_${alnum(32, 6)}`,
    'Slack xoxb-': `xoxb-${sample('[0-9]{12}', 7)}-${sample('[0-9]{13}', 8)}-${alnum(24, 9)}`,
    'Google AIza': `AIza${sample('[\\w-]{35}', 10)}`,
    JWT: `eyJ${alnum(20, 11)}.eyJ${alnum(40, 12)}.${sample('[\\w-]{43}', 13)}`,
  };
  for (const [name, secret] of Object.entries(cases)) {
    it(`${name} in every place`, () => {
      for (const [where, text] of Object.entries(places(secret))) assertHidden(text, secret, `${name} in a ${where}`);
    });
  }

  it('an AWS key pair in a credentials CSV line without labels', () => {
    const id = `AKIA${sample('[A-Z0-9]{16}', 14)}`;
    const key = sample('[A-Za-z0-9/+]{40}', 15);
    const csv = `User name,Access key ID,Secret access key\nci-bot,${id},${key}\n`;
    for (const text of [csv, JSON.stringify({ content: csv })]) {
      assertHidden(text, id, 'the key id');
      assertHidden(text, key, 'the secret key');
    }
  });
});

describe('redaction coverage: secrets their context reveals', () => {
  const pw = 'Tr0ub4dor&3x';
  const cases: Record<string, [string, string]> = {
    '.pgpass line': [`db.internal:5432:orders:app_user:${pw}`, pw],
    '.netrc line': [`machine api.example.com login deploy password ${pw}`, pw],
    'mysql -pPASSWORD': [`mysql -u root -p${pw} orders < dump.sql`, pw],
    "mysql -p'PASSWORD'": [`mysqldump -h db -u root -p'${pw}' orders`, pw],
    'docker login -p': [`docker login -u ci -p ${pw} registry.example.com`, pw],
    'sshpass -p': [`sshpass -p '${pw}' ssh deploy@10.0.0.5`, pw],
    '.npmrc _auth': ['//registry.example.com/:_auth=ZGVwbG95OnMzY3IzdC1wYXNz', 'ZGVwbG95OnMzY3IzdC1wYXNz'],
    'Azure SharedAccessKey': ['Endpoint=sb://orders.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=q8Zr3kP0xV2mN7bT4cW1yL6hJ9fD5sA0gE3uI8oK2nM=', 'q8Zr3kP0xV2mN7bT4cW1yL6hJ9fD5sA0gE3uI8oK2nM='],
    'Azure SAS sig=': ['https://acct.blob.core.windows.net/c/f.zip?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31&sig=Zx9%2Fq3Lm8Rt2Vb7Nc4Kd1Pf6Hg0Js5Wa3Ey8Ui2Oo%3D', 'Zx9%2Fq3Lm8Rt2Vb7Nc4Kd1Pf6Hg0Js5Wa3Ey8Ui2Oo%3D'],
  };
  for (const [name, [text, secret]] of Object.entries(cases)) {
    it(name, () => {
      assertHidden(text, secret, name);
      assertHidden(JSON.stringify({ command: `cd app\n${text}\necho ok` }), secret, `${name} in a tool input`);
      assertHidden(`result:\n${text}\ndone`, secret, `${name} in a tool output`);
      assertHidden(`     1\tfirst\n     2\t${text}\n     3\tlast`, secret, `${name} in a file read`);
      assertHidden(`     2→${text}`, secret, `${name} in a file read (arrow numbering)`);
    });
  }
});

describe('redaction coverage: personal numbers with checksums', () => {
  it('checksums: Luhn and IBAN mod 97', () => {
    assert.ok(luhn('4539578763621486'));
    assert.ok(!luhn('4539578763621487'));
    assert.ok(ibanValid('GB82 WEST 1234 5698 7654 32'));
    assert.ok(!ibanValid('GB82 WEST 1234 5698 7654 33'));
  });

  const hidden: Record<string, string> = {
    'a card number in groups': '4539 5787 6362 1486',
    'a card number with dashes': '5425-2334-3010-9903',
    'a card number in one run': '4539578763621486',
    'an IBAN': 'DE89 3704 0044 0532 0130 00',
    'an IBAN in one run': 'GB82WEST12345698765432',
    'a US SSN': '123-45-6789',
    'an E.164 phone number': '+14155552671',
    'an international number with spaces': '+44 20 7946 0958',
    'a French number in pairs': '+33 1 42 68 53 00',
    'a NANP number': '(415) 555-2671',
    'a NANP number with dashes': '415-555-2671',
  };
  for (const [name, value] of Object.entries(hidden)) {
    it(`hides ${name}`, () => {
      const out = redactor.redact(`Customer record: ${value}, verified.`).text;
      assert.ok(!out.includes(value), `${name}: ${out}`);
    });
  }

  const kept: Record<string, string> = {
    'a number that fails Luhn': 'order 4539578763621487 shipped',
    'an ISO date and a time': 'at 2026-12-01 12:15:37',
    'a version and an IP address': 'node 20.19.9 on 10.0.12.7:8080',
    'a 9-digit SSN without dashes is just a number': 'build 123456789 passed',
    'an SSN-shaped number in area 000 or 9xx': 'ids 000-12-3456 and 912-34-5678',
    'a port range and a commit count': 'ports 3000-3010, 1234 commits, 555-0100',
    'a timestamp in milliseconds': 'took 1733059537123 ms',
    'a UUID': 'id 123e4567-e89b-12d3-a456-426614174000',
    'a log line of colon-separated times': '12:34:56:789:worker-started',
  };
  for (const [name, text] of Object.entries(kept)) {
    it(`leaves ${name}`, () => assert.equal(redactor.redact(text).text, text));
  }
});

describe('redaction: false positives fixed', () => {
  const untouched = [
    'Password: click the reset link in the e-mail we sent you.',
    'client_secret: disabled',
    'ssh ubuntu@ec2-3-91-12-7.compute-1.amazonaws.com',
    'scp build.tgz deploy@web-01.internal.example.com:/srv/',
    'arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-creds-AbCdEf',
    '*   `allPass`: Takes a list of predicates and returns true when all of them pass.',
  ];
  for (const text of untouched) it(`leaves ${JSON.stringify(text)}`, () => assert.equal(redactor.redact(text).text, text));

  it('the artifact index keeps a path with an e-mail address in it hidden', async () => {
    const { ArtifactIndex } = await import('../../src/core/artifacts');
    const index = new ArtifactIndex(redactor);
    index.observe({ callId: 'w1', name: 'Write', input: { file_path: 'exports/jane.doe@example.com.json', content: '{}' }, output: 'ok', isError: false, callRecord: 1, resultRecord: 2 }, 0);
    const paths = index.entries().map((e) => e.path);
    assert.ok(paths.length === 1 && !paths[0]!.includes('jane.doe@example.com'), JSON.stringify(paths));
  });

  it('an e-mail address inside a file path is hidden, the extension kept', () => {
    const out = redactor.redact('wrote exports/jane.doe@example.com.json').text;
    assert.ok(!out.includes('jane.doe@example.com'), out);
    assert.ok(out.endsWith('.json'), out);
  });
});

describe('redaction: derived text never carries a secret', () => {
  const token = `ghp_${sample('[A-Za-z0-9]{36}', 99)}`;

  it('the title of a transcript is derived from redacted text', () => {
    const title = titleFromRecords([{ index: 0, role: 'user', content: `Always authenticate with ${token} when you push` }], redactor);
    assert.ok(title !== undefined && !title.includes(token.slice(0, 12)), title);
  });

  it('summary keys, command labels and protected facts of a replayed task', async () => {
    const b = new RecordBuilder().user(`Always authenticate with ${token} when you push. Never print the value of ${token}.`);
    for (let i = 0; i < 60; i++) {
      b.step(`Pushing part ${i} with the token ${token} as asked.`, [
        { name: 'Bash', input: { command: `GITHUB_TOKEN=${token} git push origin part-${i} && curl -H "Authorization: token ${token}" https://api.github.com/repos/o/r/pulls/${i}` }, output: `pushed part ${i}\n${'remote: ok\n'.repeat(40)}` },
      ]);
    }
    const { session } = await replay(b.records, { budget: defaultBudget({ window: 8_000, reserve: 1_000 }), counter: new CharRatioTokenCounter(), redactor });
    const summary = session.engine.currentSummary;
    assert.ok(summary, 'the task folded');
    const derived = [
      JSON.stringify(summary),
      JSON.stringify(session.state.facts()),
      JSON.stringify(session.artifacts.entries()),
      session.engine.project().map((m) => m.content).join('\n'),
    ].join('\n');
    for (const piece of [token, token.slice(0, 14), token.slice(4, 20), token.slice(-14)]) {
      assert.ok(!derived.includes(piece), `a piece of the token (${piece}) is in the derived text`);
    }
  });
});

describe('redaction: text is hidden before it is cut', () => {
  it('a goal cut at its limit keeps no piece of a token that straddled the cut', () => {
    const token = `ghp_${sample('[A-Za-z0-9]{36}', 11)}`;
    for (const lead of [190, 196, 201]) {
      const state = new ProtectedState(redactor);
      // A run with no space to cut at (a pasted URL): the cut falls inside the token.
      state.observe('user', { kind: 'text', address: 'text:0', record: 0, text: `Fetch https://example.org/${'p'.repeat(lead)}?auth=${token}&next=1 and report.` } as Part);
      const goal = state.facts().find((f) => f.type === 'goal')!;
      assert.ok(!goal.value.includes(token.slice(0, 8)), `cut at ${lead}: ${goal.value.slice(-80)}`);
    }
  });

  it('a failed command\'s label keeps no piece of a token cut with it', async () => {
    const token = `ghp_${sample('[A-Za-z0-9]{36}', 12)}`;
    const b = new RecordBuilder().user('Ship it.');
    for (let i = 0; i < 40; i++) b.step(`Step ${i}.`, [{ name: 'Bash', input: { command: `curl -s -H "X-Custom-Header-Long: ${token}" https://example.org/${i} | tee out${i}.txt` }, output: `curl: (6) Could not resolve host: example.org\n${'retrying\n'.repeat(60)}exit code 6`, isError: true }]);
    const { session } = await replay(b.records, { budget: defaultBudget({ window: 8_000, reserve: 1_000 }), counter: new CharRatioTokenCounter(), redactor });
    const summary = JSON.stringify(session.engine.currentSummary ?? {});
    assert.ok(!summary.includes(token.slice(0, 8)), summary.slice(0, 400));
  });
});

describe('redaction: keys and labels are made from redacted text', () => {
  it('a topic key never holds a token', async () => {
    const { subjectKey } = await import('../../src/core/digest');
    const token = `ghp_${sample('[A-Za-z0-9]{36}', 7)}`;
    const key = subjectKey(`Always authenticate ${token} before pushing`, redactor);
    assert.ok(!key.toLowerCase().includes(token.slice(4, 12).toLowerCase()), key);
  });
});
