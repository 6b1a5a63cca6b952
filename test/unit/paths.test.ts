import { strict as assert } from 'node:assert';
import { forwardSlashes, relativeTo, workspaceRootOf } from '../../src/core/paths';
import { emptySummary, renderSummary, SummaryBuilder, SummaryLineCounter, type SummaryState } from '../../src/core/summary';
import { EVICTED_KEY, evictedCount } from '../../src/core/summaryCap';
import { layoutAfterFold } from '../../src/core/summaryLayout';
import { CharRatioTokenCounter } from '../../src/core/tokens';
import { SecretRedactor } from '../../src/core/redact';

const redactor = new SecretRedactor();

describe('the workspace of a session\'s paths', () => {
  it('spells a Windows path with forward slashes, so both spellings of one file compare equal', () => {
    assert.equal(forwardSlashes('src\\core\\a.ts'), 'src/core/a.ts');
    assert.equal(forwardSlashes('C:\\Users\\me/x.ts'), 'C:/Users/me/x.ts');
    assert.equal(forwardSlashes('/already/posix'), '/already/posix');
  });

  it('is where the paths branch, POSIX and Windows alike', () => {
    assert.equal(workspaceRootOf(['/Users/ana/dev/app/src/a.ts', '/Users/ana/dev/app/src/b.ts', '/Users/ana/dev/app/README.md', '/tmp/out.log']), '/Users/ana/dev/app/');
    assert.equal(workspaceRootOf(['C:\\w\\proj\\scripts\\x.py', 'C:\\w\\proj\\tests\\t.py', 'C:\\w\\proj\\tests\\u.py']), 'C:\\w\\proj\\');
  });

  it('is the outermost branching directory: files gathered in one folder early do not pull it down', () => {
    // Five of six in tests/: tests/ holds 83%, but the paths already branch one level up.
    const paths = ['/r/app/scripts/sync.py', ...['a', 'b', 'c', 'd', 'e'].map((n) => `/r/app/tests/${n}.py`)];
    assert.equal(workspaceRootOf(paths), '/r/app/');
  });

  it('needs three absolute paths, a 60% majority, and never names a home or system directory', () => {
    assert.equal(workspaceRootOf(['/r/app/a.ts', '/r/app/b.ts']), undefined, 'two paths are not enough');
    assert.equal(workspaceRootOf(['src/a.ts', 'src/b.ts', 'src/c.ts']), undefined, 'relative paths need no workspace');
    assert.equal(workspaceRootOf(['/r/app/a.ts', '/r/app/b.ts', '/s/x.ts', '/t/y.ts', '/u/z.ts']), undefined, 'two of five is no majority');
    assert.equal(workspaceRootOf(['/home/ana/a.txt', '/home/ana/b.txt', '/home/ana/c.txt']), undefined, 'a home directory is not a workspace');
    assert.equal(workspaceRootOf(['/tmp/a.log', '/tmp/b.log', '/tmp/c.log']), undefined);
  });

  it('writes paths under it relative to it, and leaves other paths, URIs and look-alikes whole', () => {
    const root = '/r/app/';
    assert.equal(relativeTo('edited /r/app/src/a.ts and /r/app/README.md', root), 'edited src/a.ts and README.md');
    assert.equal(relativeTo('`cd /r/app && npm test` failed', root), '`npm test` failed');
    assert.equal(relativeTo('ran in /r/app.', root), 'ran in ..');
    assert.equal(relativeTo('/r/app2/x.ts /mnt/r/app/x.ts file:/r/app/x.ts /tmp/x', root), '/r/app2/x.ts /mnt/r/app/x.ts file:/r/app/x.ts /tmp/x');
    assert.equal(relativeTo('cd "C:\\w\\proj" && python -m pytest C:\\w\\proj\\tests', 'C:\\w\\proj\\'), 'python -m pytest tests');
    assert.equal(relativeTo('nothing here', undefined), 'nothing here');
  });
});

describe('the head written relative to the workspace', () => {
  function stateWith(paths: readonly string[], coverageEnd: number, from = emptySummary()): SummaryState {
    const b = new SummaryBuilder(from, redactor);
    b.requests.push({ ordinal: 1, text: 'Fix /r/app/src/a.ts', record: 0, elided: 0 });
    paths.forEach((p, i) => b.upsert('Deliverables', { key: p, text: 'modified ×1', sources: [i + 1], priority: 1 }));
    b.upsert('Constraints', { key: 'keep-vendor', text: 'Never touch /r/app/vendor/', sources: [0], priority: 0 });
    b.upsert('Findings', { key: 'cause', text: 'The cause is in /r/app/src/b.ts line 3', sources: [2], priority: 3 });
    b.current = { goal: '#1 (r0): Fix /r/app/src/a.ts', deliverable: 'latest: /r/app/src/a.ts', status: 'ran `cd /r/app && npm test`', next: '' };
    return b.build(coverageEnd, from.folds + 1);
  }

  it('names the workspace once; the agent\'s lines are relative, the user\'s words verbatim', () => {
    const state = stateWith(['/r/app/src/a.ts', '/r/app/src/b.ts', '/r/app/README.md'], 10);
    assert.equal(state.root, '/r/app/');
    const text = renderSummary(state);
    assert.match(text, /^Paths are relative to the workspace \/r\/app\/$/m);
    assert.match(text, /^- modified ×1 each: src\/a\.ts, src\/b\.ts, README\.md \(r1, r2, r3\)$/m, 'files listed on one line are relative too');
    assert.match(text, /^- The cause is in src\/b\.ts line 3 \(r2\)$/m);
    assert.match(text, /^- #1 \(r0\): Fix \/r\/app\/src\/a\.ts$/m, 'a request keeps its words');
    assert.match(text, /Never touch \/r\/app\/vendor\//, 'a rule keeps its words');
    assert.match(text, /^Deliverable: latest: src\/a\.ts$/m);
    assert.match(text, /^Status: ran `npm test`$/m);
  });

  it('keeps the workspace once chosen, and a head whose workspace is new is rendered in full', () => {
    const first = stateWith(['/r/app/src/a.ts', '/r/app/src/b.ts', '/r/app/README.md'], 10);
    const later = stateWith(['/r/app/src/a.ts', '/elsewhere/x.ts', '/elsewhere/y.ts', '/elsewhere/z.ts'], 20, first);
    assert.equal(later.root, '/r/app/', 'chosen once');
    const none = stateWith(['/r/app/src/a.ts'], 10);
    assert.equal(none.root, undefined);
    const chosen = stateWith(['/r/app/src/a.ts', '/r/app/src/b.ts', '/r/app/README.md'], 20, none);
    assert.equal(layoutAfterFold(none, chosen).kind, 'rendered');
  });

  it('a line appended at one fold and changed at the next is rewritten where it stands, not repeated', () => {
    const base = stateWith(['/r/app/src/a.ts', '/r/app/src/b.ts', '/r/app/README.md'], 10);
    const laid0 = layoutAfterFold(undefined, base).state;
    const grow = (from: SummaryState, text: string, end: number): SummaryState => {
      const b = new SummaryBuilder(from, redactor);
      b.upsert('Deliverables', { key: '/r/app/src/new.ts', text, sources: [end - 1], priority: 1 });
      b.upsert('Findings', { key: `finding-${end}`, text: `Fold ${end} found the parser slow`, sources: [end - 1], priority: 3 });
      return b.build(end, from.folds + 1);
    };
    const laid1 = layoutAfterFold(laid0, grow(laid0, 'created', 20));
    assert.equal(laid1.kind, 'appended');
    const laid2 = layoutAfterFold(laid1.state, grow(laid1.state, 'created, modified ×1', 30));
    assert.equal(laid2.kind, 'appended');
    const added = laid2.state.layout!.added;
    assert.equal(added.filter((l) => l.includes('src/new.ts')).length, 1, added.join('\n'));
    assert.match(added[0]!, /^- \[Deliverables\] src\/new\.ts: created, modified ×1 \(r19, r29\)$/, 'rewritten in its place');
    assert.equal(added.length, 3, 'the new finding of each fold is appended after it');
    assert.ok(renderSummary(laid2.state).startsWith(renderSummary(laid1.state).slice(0, renderSummary(laid1.state).indexOf('- [Deliverables]'))), 'the text before the rewritten line keeps its bytes');
  });

  it('a line that moves to another section says so, and where it was appended under the old one it is rewritten there', () => {
    const base = stateWith(['/r/app/src/a.ts', '/r/app/src/b.ts', '/r/app/README.md'], 10);
    const laid0 = layoutAfterFold(undefined, base).state;
    const next = (from: SummaryState, end: number, edit: (b: SummaryBuilder) => void): SummaryState => {
      const b = new SummaryBuilder(from, redactor);
      edit(b);
      return b.build(end, from.folds + 1);
    };
    const failed = '`cargo test` failed (exit 101): error[E0433]: could not find `bash`';
    const laid1 = layoutAfterFold(laid0, next(laid0, 20, (b) => b.upsert('Ruled out', { key: 'cargo-test', text: failed, sources: [19], priority: 2 })));
    assert.equal(laid1.kind, 'appended');
    const laid2 = layoutAfterFold(
      laid1.state,
      next(laid1.state, 30, (b) => {
        b.facts['Ruled out'] = b.facts['Ruled out'].filter((l) => l.key !== 'cargo-test');
        b.upsert('Findings', { key: 'cargo-test', text: `${failed}; later it worked (r29)`, sources: [19, 29], priority: 3 });
      }),
    );
    assert.equal(laid2.kind, 'appended');
    const added = laid2.state.layout!.added;
    assert.deepEqual(added, ['- [Findings, moved from Ruled out] `cargo test` failed (exit 101): error[E0433]: could not find `bash`; later it worked (r29) (r19, r29)'], 'one line, in the slot of the line it replaces');
  });

  it('a head appended after the cap evicted archived gists keeps them as sent and appends no pointer saying they are not shown', () => {
    const base = new SummaryBuilder(stateWith(['/r/app/src/a.ts', '/r/app/src/b.ts', '/r/app/README.md'], 10), redactor);
    base.facts.Archived.push(
      { key: 'old-probe', text: '[Findings] The cache misses on every cold start', sources: [3], priority: 3 },
      { key: 'old-try', text: '[Ruled out] `make fast` failed (exit 2): no rule to make target', sources: [4], priority: 3 },
    );
    const laid0 = layoutAfterFold(undefined, base.build(12, 1)).state;
    const b = new SummaryBuilder(laid0, redactor);
    b.facts.Archived = [{ key: EVICTED_KEY, text: '2 older archived lines (findings first) are not shown; the record keeps them', sources: [3, 4], priority: 3 }];
    b.upsert('Findings', { key: 'parser-slow', text: 'The parser is slow on files over 1 MB', sources: [19], priority: 3 });
    const next = b.build(20, 2);
    assert.equal(evictedCount(next), 2);
    const laid1 = layoutAfterFold(laid0, next);
    assert.equal(laid1.kind, 'appended');
    const text = renderSummary(laid1.state);
    assert.match(text, /The cache misses on every cold start/, 'the evicted gist is still shown as sent');
    assert.doesNotMatch(text, /not shown/, text);
    assert.deepEqual(laid1.state.layout!.added, ['- [Findings] The parser is slow on files over 1 MB (r19)']);
    // Rendered in full, the pointer stands in for the gists the head no longer shows.
    assert.match(renderSummary(layoutAfterFold(undefined, next).state), /2 older archived lines \(findings first\) are not shown/);
  });

  it('a live line the cap shortened since (a deliverable\'s note dropped) is not appended again; a new count is', () => {
    const base = stateWith(['/r/app/src/a.ts', '/r/app/src/b.ts', '/r/app/README.md'], 10);
    const noted = new SummaryBuilder(base, redactor);
    noted.upsert('Deliverables', { key: '/r/app/CONVENTIONS.md', text: 'modified ×1 — last edit `- Follow the airbnb style` → `- Follow the airbnb style.`', sources: [9], priority: 1 });
    const laid0 = layoutAfterFold(undefined, noted.build(12, base.folds + 1)).state;
    const step = (from: SummaryState, text: string, end: number): ReturnType<typeof layoutAfterFold> => {
      const b = new SummaryBuilder(from, redactor);
      b.upsert('Deliverables', { key: '/r/app/CONVENTIONS.md', text, sources: [9], priority: 1 });
      b.upsert('Findings', { key: `finding-${end}`, text: `Fold ${end} found the parser slow`, sources: [end - 1], priority: 3 });
      return layoutAfterFold(from, b.build(end, from.folds + 1));
    };
    const shortened = step(laid0, 'modified ×1', 20);
    assert.equal(shortened.kind, 'appended');
    assert.ok(!shortened.state.layout!.added.some((l) => l.includes('CONVENTIONS.md')), shortened.state.layout!.added.join('\n'));
    const counted = step(shortened.state, 'modified ×2', 30);
    assert.ok(counted.state.layout!.added.some((l) => /CONVENTIONS\.md: modified ×2/.test(l)), counted.state.layout!.added.join('\n'));
  });

  it('a failure appended again says only what the head above does not: its causes already sent are "as above"', () => {
    const b = new SummaryBuilder(emptySummary(), redactor);
    b.upsert('Ruled out', { key: 'bun-test', text: '`bun test` failed (error) ×2: 61 passed, 20 failed; error: Session "test-session" already exists · TypeError: db.getNewSessionRepoPath is not a function', sources: [375, 378], priority: 2, origin: 'exact' });
    const laid0 = layoutAfterFold(undefined, b.build(380, 1)).state;
    const again = (causes: string, times: number): readonly string[] => {
      const next = new SummaryBuilder(laid0, redactor);
      next.upsert('Ruled out', { key: 'bun-test', text: `\`bun test\` failed (error) ×${times}: ${causes}`, sources: [375, 378, 432], priority: 2, origin: 'exact' });
      next.upsert('Findings', { key: 'mock-calls', text: 'The `execAsync` mock is never called: `git.ts` builds it at module scope', sources: [433], priority: 3 });
      const laid = layoutAfterFold(laid0, next.build(440, 2));
      assert.equal(laid.kind, 'appended');
      return laid.state.layout!.added;
    };
    const shown = '61 passed, 20 failed; error: Session "test-session" already exists · TypeError: db.getNewSessionRepoPath is not a function';
    assert.ok(again(`${shown} · error: expect(received).toHaveBeenCalledWith(expected) — at git.test.ts:49`, 5).includes('- [Ruled out] `bun test` failed (error) ×5: as above, and error: expect(received).toHaveBeenCalledWith(expected) — at git.test.ts:49 (r375, r378, r432)'));
    assert.ok(again(shown, 3).includes('- [Ruled out] `bun test` failed (error) ×3: as above (r375, r378, r432)'));
    // Causes all new: the line is said whole.
    assert.ok(again('error: Cannot find module "bun:test"', 3).includes('- [Ruled out] `bun test` failed (error) ×3: error: Cannot find module "bun:test" (r375, r378, r432)'));
  });

  it('a line the cap compressed since is kept as sent; a line superseded renders the head in full', () => {
    const b = new SummaryBuilder(emptySummary(), redactor);
    b.upsert('Findings', { key: 'parser-slow', text: 'The parser reads `config.yml` twice on every start', sources: [3], priority: 3 });
    b.upsert('Decisions', { key: 'use-cache', text: 'Cache the parsed `config.yml` in memory', sources: [4], priority: 2 });
    const laid0 = layoutAfterFold(undefined, b.build(5, 1)).state;
    const sent = renderSummary(laid0);
    // The next fold demotes the finding to an archived gist (same key) and adds a decision.
    const demoted = new SummaryBuilder(laid0, redactor);
    demoted.facts.Findings.splice(0, 1);
    demoted.facts.Archived.push({ key: 'parser-slow', text: '[Findings] The parser reads `config.yml` twice…', sources: [3], priority: 3 });
    demoted.upsert('Decisions', { key: 'lazy-load', text: 'Load plugins lazily', sources: [8], priority: 2 });
    const laid1 = layoutAfterFold(laid0, demoted.build(10, 2));
    assert.equal(laid1.kind, 'appended');
    const text = renderSummary(laid1.state);
    assert.ok(text.startsWith(sent.slice(0, sent.indexOf('### Current state'))), 'the lines already sent keep their bytes');
    assert.ok(!text.includes('twice…'), 'the gist of a line kept whole is not repeated');
    assert.match(text, /\[Decisions\] lazy-load: Load plugins lazily/);
    // A decision withdrawn (no gist of it anywhere) is no longer true: the head is rendered again without it.
    const withdrawn = new SummaryBuilder(laid1.state, redactor);
    withdrawn.facts.Decisions.splice(withdrawn.facts.Decisions.findIndex((l) => l.key === 'use-cache'), 1);
    const laid2 = layoutAfterFold(laid1.state, withdrawn.build(12, 3));
    assert.equal(laid2.kind, 'rendered');
    assert.ok(!renderSummary(laid2.state).includes('Cache the parsed'));
    // A decision moved to Ruled out (the user said it did not take) was so when sent: kept, its new line appended.
    const disputed = new SummaryBuilder(laid1.state, redactor);
    const at = disputed.facts.Decisions.findIndex((l) => l.key === 'use-cache');
    const [line] = disputed.facts.Decisions.splice(at, 1);
    disputed.upsert('Ruled out', { ...line!, text: `${line!.text} — not so, the user (r11): "still slow"` });
    const laid3 = layoutAfterFold(laid1.state, disputed.build(12, 3));
    assert.equal(laid3.kind, 'appended');
    assert.match(renderSummary(laid3.state), /- \[Ruled out, moved from Decisions\] use-cache: Cache the parsed `config\.yml` in memory — not so, the user \(r11\): "still slow"/);
  });

  it('a head that said nothing yet, or less than a cache block, is rendered in full rather than appended to', () => {
    const counter = new SummaryLineCounter(new CharRatioTokenCounter());
    const grown = (from: SummaryState, n: number): SummaryState => {
      const b = new SummaryBuilder(from, redactor);
      for (let i = 0; i < n; i++) b.upsert('Findings', { key: `f-${from.folds}-${i}`, text: `Module ${i} of fold ${from.folds} reads \`config.yml\` at start-up and caches it for the whole run`, sources: [from.coverageEnd + i], priority: 3 });
      return b.build(from.coverageEnd + n + 1, from.folds + 1);
    };
    const empty = layoutAfterFold(undefined, emptySummary()).state;
    const first = layoutAfterFold(empty, grown(empty, 2), counter);
    assert.equal(first.kind, 'rendered', 'nothing was sent: no "(none)" sections above the first lines');
    assert.ok(!renderSummary(first.state).includes('### Added at later folds'));
    const small = layoutAfterFold(first.state, grown(first.state, 2), counter);
    assert.equal(small.kind, 'rendered', 'two lines are less than a cache block');
    const large = layoutAfterFold(small.state, grown(small.state, 3), counter);
    assert.equal(large.kind, 'appended', 'four lines and more are a prefix worth keeping');
    // Appended lines that come to outweigh the head as first sent: rendered in full again, so it reads by section.
    let laid = large;
    let folds = 0;
    while (laid.kind === 'appended' && folds < 10) {
      laid = layoutAfterFold(laid.state, grown(laid.state, 2), counter);
      folds++;
    }
    assert.equal(laid.kind, 'rendered');
    assert.equal(folds, 1, 'three appended lines were fewer than the four sent; five are more');
    assert.ok(!renderSummary(laid.state).includes('### Added at later folds'));
  });

  it('an archived group shows only the gists the head did not show as sent: one that only lost a gist is not repeated', () => {
    const b = new SummaryBuilder(emptySummary(), redactor);
    b.facts.Archived.push({ key: 'archived~store-repos', members: ['store-repos', 'created-at'], text: '[Decisions] Store repos under per-repo directories · Created: 2024-04-29T15:01', sources: [247, 337], priority: 3 });
    const laid0 = layoutAfterFold(undefined, b.build(340, 1)).state;
    const sent = renderSummary(laid0);
    // The next fold supersedes one gist of the group (its new wording is a line of its own) and groups an old gist with a new one.
    const next = new SummaryBuilder(laid0, redactor);
    next.dropArchivedMember('created-at');
    next.facts.Archived.push({ key: 'created-at', text: '[Decisions] Created: 2024-04-29T15:23', sources: [361], priority: 3 });
    next.facts.Archived.push({ key: 'archived~store-repos-2', members: ['store-repos-2', 'pr-md'], text: '[Decisions] Store repos under per-repo directories · Generated `pr.md` summarizing the changes', sources: [337, 369], priority: 3 });
    const laid1 = layoutAfterFold(laid0, next.build(370, 2));
    assert.equal(laid1.kind, 'appended');
    const text = renderSummary(laid1.state);
    assert.ok(text.startsWith(sent.slice(0, sent.indexOf('### Current state'))), 'the lines already sent keep their bytes');
    assert.equal(text.split('Store repos under per-repo directories').length - 1, 1, text);
    assert.match(text, /- \[Archived\] .*Created: 2024-04-29T15:23 \(r361\)/, 'the new wording of the superseded gist');
    assert.match(text, /- \[Archived\] \[Decisions\] Generated `pr\.md` summarizing the changes \(r337, r369\)/, 'only the gist not shown yet');
  });

  it('an archived group whose statements were appended on lines of their own takes the place of the first: each is said once', () => {
    const base = stateWith(['/r/app/src/a.ts', '/r/app/src/b.ts', '/r/app/README.md'], 10);
    const laid0 = layoutAfterFold(undefined, base).state;
    // Fold 1 appends a commit (live) and a gist (archived alone).
    const one = new SummaryBuilder(laid0, redactor);
    one.upsert('Decisions', { key: 'commit-1619e93', text: 'committed 1619e93: "docs: Reorder lists in CONVENTIONS.md"', sources: [190], priority: 2 });
    one.facts.Archived.push({ key: 'commit-fce741d', text: '[Decisions] committed fce741d: "refactor: Use unary helper"', sources: [220], priority: 3 });
    const laid1 = layoutAfterFold(laid0, one.build(221, laid0.folds + 1));
    assert.equal(laid1.kind, 'appended');
    // Fold 2 archives the commit and groups each with a newer gist.
    const two = new SummaryBuilder(laid1.state, redactor);
    two.facts.Decisions.splice(two.facts.Decisions.findIndex((l) => l.key === 'commit-1619e93'), 1);
    two.facts.Archived.splice(0, two.facts.Archived.length);
    two.facts.Archived.push({ key: 'archived~commit-1619e93', members: ['commit-1619e93', 'search-part'], text: '[Decisions] committed 1619e93: "docs: Reorder lists in CONVENTIONS.md" · I updated the `SEARCH` part to match the formatting', sources: [190, 191], priority: 3 });
    two.facts.Archived.push({ key: 'archived~commit-fce741d', members: ['commit-fce741d', 'commit-adc107a'], text: '[Decisions] committed fce741d: "refactor: Use unary helper" · committed adc107a: "docs: Add TSDoc"', sources: [220, 223], priority: 3 });
    const laid2 = layoutAfterFold(laid1.state, two.build(230, laid1.state.folds + 1));
    assert.equal(laid2.kind, 'appended');
    const text = renderSummary(laid2.state);
    assert.equal(text.split('committed 1619e93').length - 1, 1, text);
    assert.equal(text.split('committed fce741d').length - 1, 1, text);
    assert.match(text, /committed adc107a/);
    assert.ok(text.startsWith(renderSummary(laid1.state).slice(0, renderSummary(laid1.state).indexOf('### Added at later folds'))), 'the frozen head keeps its bytes');
  });

  it('an archived gist counts as shown only when the frozen head shows it whole', () => {
    const b = new SummaryBuilder(emptySummary(), redactor);
    b.facts.Archived.push({ key: 'port-8080', text: '[Findings] The server listens on port 8080', sources: [3], priority: 3 });
    const laid0 = layoutAfterFold(undefined, b.build(5, 1)).state;
    const next = new SummaryBuilder(laid0, redactor);
    next.facts.Archived.push({ key: 'archived~port-8080', members: ['port-8080', 'port-80'], text: '[Findings] The server listens on port 8080 · The server listens on port 80', sources: [3, 7], priority: 3 });
    next.facts.Archived.splice(0, 1);
    const laid1 = layoutAfterFold(laid0, next.build(10, 2));
    assert.equal(laid1.kind, 'appended');
    assert.match(renderSummary(laid1.state), /- \[Archived\] \[Findings\] The server listens on port 80 \(r3, r7\)/);
  });

  it('a line changed and compressed at the same fold is no longer what was sent: the head is rendered in full', () => {
    const b = new SummaryBuilder(emptySummary(), redactor);
    b.upsert('Ruled out', { key: 'npm-test', text: '`npm test` failed (exit 1): Cannot find module foo', sources: [3], priority: 2 });
    b.upsert('Findings', { key: 'tests-npm', text: '`npm test` → 12 passing (as of r4)', sources: [4], priority: 3 });
    const laid0 = layoutAfterFold(undefined, b.build(5, 1)).state;
    // The failure was overcome (it moves to Findings as "later it worked"), and the count changed; the cap archives both.
    const next = new SummaryBuilder(laid0, redactor);
    next.facts['Ruled out'].splice(0, 1);
    next.facts.Findings.splice(0, 1);
    next.facts.Archived.push({ key: 'npm-test', text: '[Findings] npm test failed (exit 1): Cannot find module foo; later it worked (r9)', sources: [3, 9], priority: 3 });
    next.facts.Archived.push({ key: 'tests-npm', text: '[Findings] `npm test` → 3 failing (as of r9)', sources: [4, 9], priority: 3 });
    const laid1 = layoutAfterFold(laid0, next.build(10, 2));
    assert.equal(laid1.kind, 'rendered');
    assert.ok(!renderSummary(laid1.state).includes('12 passing'));
  });
});
