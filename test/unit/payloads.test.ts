import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PAYLOAD_THRESHOLD_BYTES, PayloadMissingError, PayloadStore, PayloadWriteError } from '../../src/store/payloads';

const sha256 = (text: string): string => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

describe('store payloads', function () {
  let root: string;
  let n = 0;
  const freshDir = (): string => path.join(root, `s${++n}`, 'session.db.payloads');

  before(() => {
    root = fs.mkdtempSync(path.join(tmpdir(), 'ck-payloads-'));
  });
  after(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('uses a 32 KB threshold', () => {
    assert.equal(PAYLOAD_THRESHOLD_BYTES, 32768);
  });

  it('putSync/get/has/list/delete round-trip, content-addressed and idempotent', () => {
    const dir = freshDir();
    const store = new PayloadStore(dir);
    assert.equal(store.dir, dir);
    assert.ok(!fs.existsSync(dir), 'created lazily');
    assert.deepEqual(store.list(), []);

    const text = 'tool output ✓ 😀\n'.repeat(3000);
    const a = store.putSync(text);
    assert.equal(a.hash, sha256(text));
    assert.equal(a.bytes, Buffer.byteLength(text, 'utf8'));
    assert.ok(fs.statSync(path.join(dir, a.hash)).isFile());
    assert.equal(store.get(a.hash), text);
    assert.ok(store.has(a.hash));
    assert.ok(store.verify(a.hash));

    const mtime = fs.statSync(path.join(dir, a.hash)).mtimeMs;
    assert.deepEqual(store.putSync(text), a);
    assert.equal(fs.statSync(path.join(dir, a.hash)).mtimeMs, mtime, 'existing file kept');

    const b = store.putSync('');
    assert.equal(b.hash, sha256(''));
    assert.equal(b.bytes, 0);
    assert.equal(store.get(b.hash), '');
    assert.deepEqual(store.list(), [a.hash, b.hash].sort());
    assert.deepEqual(
      fs.readdirSync(dir).sort(),
      [a.hash, b.hash].sort(),
      'no temp files left',
    );

    assert.equal(store.delete(a.hash), true);
    assert.equal(store.delete(a.hash), false);
    assert.ok(!store.has(a.hash));
    assert.deepEqual(store.list(), [b.hash]);
  });

  it('get of a missing payload throws PayloadMissingError with the hash and path', () => {
    const dir = freshDir();
    const store = new PayloadStore(dir);
    const hash = sha256('never stored');
    assert.throws(
      () => store.get(hash),
      (e: unknown) =>
        e instanceof PayloadMissingError &&
        e.hash === hash &&
        e.path === path.join(dir, hash) &&
        e.message.includes(hash) &&
        e.message.includes(path.join(dir, hash)),
    );
    assert.throws(() => store.get('../../etc/passwd'), RangeError);
    assert.equal(store.has('../x'), false);
  });

  it('put hashes exactly the UTF-8 bytes even when slices fall inside surrogate pairs', async () => {
    const dir = freshDir();
    const samples = [
      'abc😀def😀😀g',
      '😀'.repeat(50),
      'x😀'.repeat(33),
      'lone \ud800 high and \udc00 low surrogates 😀',
      'ascii only',
      '',
    ];
    for (const chunkChars of [1, 2, 3, 7]) {
      const store = new PayloadStore(dir, { chunkChars });
      for (const s of samples) {
        const r = await store.put(s);
        const expected = Buffer.from(s, 'utf8');
        assert.equal(r.hash, createHash('sha256').update(expected).digest('hex'), `chunk ${chunkChars}: ${JSON.stringify(s)}`);
        assert.equal(r.bytes, expected.length);
        assert.deepEqual(fs.readFileSync(path.join(dir, r.hash)), expected);
        assert.equal(await store.getAsync(r.hash), expected.toString('utf8'));
      }
    }
    assert.equal(fs.readdirSync(dir).filter((f) => f.startsWith('.tmp-')).length, 0);
  });

  it('put replaces a damaged file under the same hash, and keeps a good one', async () => {
    const dir = freshDir();
    const store = new PayloadStore(dir);
    const text = 'y'.repeat(100_000);
    const { hash } = await store.put(text);
    fs.writeFileSync(path.join(dir, hash), 'y'.repeat(10)); // truncated by something outside our control
    assert.equal(store.verify(hash), false);
    await store.put(text);
    assert.equal(store.verify(hash), true);
    assert.equal(store.get(hash), text);
  });

  it('reports a clear PayloadWriteError when the directory cannot be created', async () => {
    const parent = path.join(root, `blocked${++n}`);
    fs.writeFileSync(parent, 'a file where a directory should be');
    const store = new PayloadStore(path.join(parent, 'session.db.payloads'));
    await assert.rejects(
      store.put('data'),
      (e: unknown) => e instanceof PayloadWriteError && e.code === 'ENOTDIR' && e.message.includes(parent),
    );
    assert.throws(() => store.putSync('data'), PayloadWriteError);
  });

  it('removeTempFiles clears leftovers of an interrupted put', () => {
    const dir = freshDir();
    const store = new PayloadStore(dir);
    const { hash } = store.putSync('keep me');
    const temp = path.join(dir, '.tmp-12345-abcdef');
    fs.writeFileSync(temp, 'partial');
    // Written within the current millisecond its mtime is past Date.now() (whole ms), as it is after a clock step back: it still goes.
    fs.utimesSync(temp, new Date(), new Date(Date.now() + 1000));
    assert.deepEqual(store.list(), [hash]);
    assert.equal(store.removeTempFiles(), 1);
    assert.deepEqual(fs.readdirSync(dir), [hash]);
  });

  it('stores a 50 MB payload without stalling the event loop', async function () {
    this.timeout(60_000);
    const dir = freshDir();
    const store = new PayloadStore(dir);
    // Built before the measurement, as a flat string (Buffer#toString), like a decoded tool output.
    const unit = Buffer.from('line of tool output ✓ with a 😀 in it, and some padding text here\n', 'utf8');
    const big = Buffer.alloc(50 * 1024 * 1024);
    for (let off = 0; off < big.length; off += unit.length) unit.copy(big, off, 0, Math.min(unit.length, big.length - off));
    // The fill may cut the last unit inside a multi-byte character; decode a whole number of units.
    const text = big.subarray(0, big.length - (big.length % unit.length)).toString('utf8');
    const expectedHash = createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

    let maxGap = 0;
    let ticks = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
      ticks++;
    }, 1);
    // What is asserted does not depend on the machine's load: other work runs between the slices of the put.
    let between = 0;
    let probing = true;
    const probe = (): void => {
      if (!probing) return;
      between++;
      setImmediate(probe);
    };
    setImmediate(probe);
    const started = performance.now();
    last = started;
    let result: { hash: string; bytes: number };
    try {
      result = await store.put(text);
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
    } finally {
      clearInterval(ticker);
      probing = false;
    }
    const elapsed = performance.now() - started;
    console.log(
      `      50 MB put: ${elapsed.toFixed(0)} ms total, ${ticks} ticks, longest event-loop gap ${maxGap.toFixed(1)} ms`,
    );
    assert.equal(result.hash, expectedHash);
    assert.equal(result.bytes, Buffer.byteLength(text, 'utf8'));
    assert.equal(fs.statSync(path.join(dir, result.hash)).size, result.bytes);
    // The put is cut in slices of about 1 MB with a turn of the event loop between them: the longest gap (printed
    // above; about 10 ms a slice on a 2-core machine) is bounded by a slice, whatever else the machine runs.
    const slices = Math.ceil(text.length / (1 << 20));
    assert.ok(between >= slices - 1, `the event loop ran ${between} times during ${slices} slices`);
    assert.ok(store.verify(result.hash));
  });
});
