import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { WorkspaceStoreHost } from '../../src/store/workspaceStore';

function collect(): { messages: [string, string][]; notify: (s: 'warning' | 'error', m: string) => void } {
  const messages: [string, string][] = [];
  return { messages, notify: (s, m) => messages.push([s, m]) };
}

async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('the extension\'s workspace session store', function () {
  this.timeout(20_000);

  it('opens quietly when all is well, and closes on dispose', async () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), 'ck-ws-')), 'storage');
    const seen = collect();
    const host = new WorkspaceStoreHost(dir, seen.notify);
    const store = await host.store();
    assert.equal(store.mode, 'writer');
    store.createSession('s', 't');
    host.dispose();
    await settle();
    assert.deepEqual(seen.messages, []);
    assert.ok(existsSync(host.file), 'closing checkpointed the database');
  });

  it('tells the user in one message that a damaged database was moved aside and rebuilt', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const first = new WorkspaceStoreHost(dir, () => undefined);
    const store = await first.store();
    await store.appendRecord('s', { index: 0, role: 'user', content: 'keep me' });
    first.dispose();
    await settle();
    writeFileSync(first.file, 'not a database');
    const seen = collect();
    const host = new WorkspaceStoreHost(dir, seen.notify);
    const reopened = await host.store();
    assert.equal(seen.messages.length, 1, JSON.stringify(seen.messages));
    const [severity, message] = seen.messages[0]!;
    assert.equal(severity, 'error');
    assert.match(message, /damaged .* moved to .*sessions\.db\.damaged-1 .* rebuilt from the journal: 1 records in 1 session/);
    assert.equal(reopened.records('s')[0]!.content, 'keep me');
    host.dispose();
  });

  it('a second window gets a warning and a read-only store', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ck-ws-'));
    const one = new WorkspaceStoreHost(dir, () => undefined);
    await one.store();
    const seen = collect();
    const two = new WorkspaceStoreHost(dir, seen.notify);
    assert.equal((await two.store()).mode, 'reader');
    assert.equal(seen.messages.length, 1);
    assert.equal(seen.messages[0]![0], 'warning');
    assert.match(seen.messages[0]![1], /read-only/);
    two.dispose();
    one.dispose();
  });
});
