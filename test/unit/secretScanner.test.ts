import { strict as assert } from 'node:assert';
import { ALNUM, DOMAIN, Scanner, isFiller, isPlaceholder } from '../../src/core/secretScanner';

describe('secretScanner: the text the detectors read', () => {
  it('reads runs of a character class and literals', () => {
    const s = new Scanner('key=abc123-def');
    assert.equal(s.length, 14);
    assert.equal(s.code(0), 107);
    assert.equal(s.run(ALNUM, 4), 10);
    assert.equal(s.atLeast(ALNUM, 4, 6), 10);
    assert.equal(s.atLeast(ALNUM, 4, 7), -1);
    assert.equal(s.literalAt(4, ['xyz', 'abc']), 3);
    assert.equal(s.literalAt(4, ['xyz']), -1);
    assert.equal(new Scanner('mail.example.com/x').run(DOMAIN, 0), 16);
  });

  it('finds the next occurrence, the text length when there is none', () => {
    const s = new Scanner('a\nb\nc');
    assert.equal(s.nextOf('\n', 0), 1);
    assert.equal(s.nextOf('\n', 1), 1);
    assert.equal(s.nextOf('\n', 2), 3);
    assert.equal(s.nextOf('#', 0), 5);
  });

  it('ends an unquoted value at a stop character or at the next query parameter', () => {
    const s = new Scanner('token=abc&sig=x&y z');
    assert.equal(s.valueEndAt(6), 9, 'the & starts the parameter sig=');
    assert.equal(s.valueEndAt(14), 17, 'an & not followed by name= does not end it');
  });

  it('protects the placeholders already in the text', () => {
    const s = new Scanner('a [REDACTED:token:abc123] b');
    assert.equal(s.isProtected(0, 2), false);
    assert.equal(s.isProtected(5, 8), true);
    assert.equal(s.isProtected(24, 27), true);
    assert.equal(s.isProtected(25, 27), false);
    assert.equal(new Scanner('plain').isProtected(0, 5), false);
  });

  it('tells placeholders and filler from values', () => {
    for (const v of ['<your-key>', '${API_KEY}', 'xxxxxxxx', '********', 'YOUR_API_KEY', 'changeme', 'token_here']) assert.equal(isPlaceholder(v), true, v);
    for (const v of ['hunter2!', 'Zx9qLm2']) assert.equal(isPlaceholder(v), false, v);
    assert.equal(isFiller('x*.-_#0'), true);
    assert.equal(isFiller('abc'), false);
  });
});
