import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CHAT_COMMANDS, contextMarkdown, factsMarkdown, followupsFor, isChatCommand, nothingToFold, quoted, rebuildMarkdown } from '../../src/agent/chatCommands';
import { fenced } from '../../src/core/fenced';
import { formatDrift, summaryDiff } from '../../src/core/drift';
import { notLoadedTotals } from '../../src/core/engine';
import type { Fact } from '../../src/core/state';
import { emptySummary } from '../../src/core/summary';

const root = path.resolve(__dirname, '..', '..', '..');

function fact(over: Partial<Fact>): Fact {
  return { id: 'f1', type: 'constraint', value: 'Never edit the migrations.', sources: [3], writer: 'user', time: 3, scope: 'session', version: 1, status: 'active', pinned: false, reason: 'extracted', ...over };
}

describe('@keeper slash commands', () => {
  it('the participant contributes exactly the commands it handles, and a disambiguation', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { contributes: { chatParticipants: { commands?: { name: string; description: string }[]; disambiguation?: { category: string; description: string; examples: string[] }[] }[] } };
    const participant = pkg.contributes.chatParticipants[0]!;
    assert.deepEqual(participant.commands, CHAT_COMMANDS.map((c) => ({ name: c.name, description: c.description })));
    assert.ok(isChatCommand('compact') && isChatCommand('facts') && !isChatCommand('help') && !isChatCommand(undefined));
    const d = participant.disambiguation?.[0];
    assert.ok(d && d.category && d.description.length > 40 && d.examples.length >= 2, 'the chat can route a request to @keeper');
  });

  it('/context leads with the budget and shows the head the model reads', () => {
    const text = contextMarkdown({ predicted: 12_307, window: 16_000, reserve: 2_000, coverageEnd: 237, records: 260, head: '## Task Context\n- a `tick` here', headTokens: 2_900, notLoaded: { tokens: 31_000, shrunk: 2, dropped: 1 } });
    assert.match(text, /^\*\*The next call sends about 12,307 tokens\*\* of the 16,000-token window \(77%; 2,000 kept free for the answer\)\./);
    assert.match(text, /stands for records 0–236; the last 23 records follow word for word, 2 older parts shortened, 1 dropped\./);
    assert.match(text, /Not loaded: 31,000 tokens of the record/);
    assert.match(text, /\n> \*\*Task Context\*\* {2}\n> - a `tick` here {2}$/, 'the head as a quote that wraps, headings in bold');
    const fresh = contextMarkdown({ predicted: 900, window: 8_000, reserve: 1_000, coverageEnd: 0, records: 4, head: '', headTokens: 0, notLoaded: { tokens: 0, shrunk: 0, dropped: 0 } });
    assert.match(fresh, /Nothing is folded yet: all 4 records are sent word for word\./);
    assert.doesNotMatch(fresh, /Not loaded|^>/m);
    assert.equal(quoted('## A\n\n```\n# not a heading\n```'), '> **A**  \n>\n> ```  \n> # not a heading  \n> ```  ');
  });

  it('the not-loaded total counts the folded records once, whatever calls of them are listed', () => {
    const span = { address: 'span:r0-r9', kind: 'span' as const, tokens: 5_000, how: 'folded' as const, recover: '' };
    const call = { address: 'tool:a', kind: 'tool' as const, toolCallId: 'a', tokens: 3_000, how: 'folded' as const, recover: '' };
    const shrunk = { address: 'tool:b', kind: 'tool' as const, toolCallId: 'b', tokens: 700, how: 'shrunk' as const, recover: '' };
    assert.deepEqual(notLoadedTotals([span, call, shrunk]), { tokens: 5_700, shrunk: 1, dropped: 0 });
    // A filtered list without the span counts the calls it shows.
    assert.deepEqual(notLoadedTotals([call]), { tokens: 3_000, shrunk: 0, dropped: 0 });
  });

  it('offers to continue after a turn the step limit or an error stopped, and nothing after an answer', () => {
    assert.deepEqual(followupsFor({ stopped: 'max-steps' }).map((f) => f.prompt), ['Continue where you stopped.']);
    assert.match(followupsFor({ stopped: 'error' })[0]!.label, /after the error/);
    assert.deepEqual(followupsFor({}), []);
    assert.deepEqual(followupsFor(undefined), []);
  });

  it('a fence is longer than any backtick run of the text', () => {
    assert.equal(fenced('a ```b``` c', 'diff'), '````diff\na ```b``` c\n````');
  });

  it('/facts lists the facts in force by kind with their sources, then the pending ones', () => {
    const text = factsMarkdown(
      [fact({}), fact({ id: 'f2', type: 'decision', value: 'Use PostgreSQL\n  for the store.', sources: [10, 12, 14, 16, 18, 20], writer: 'model', pinned: true }), fact({ id: 'g', type: 'goal', value: 'Ship it.' })],
      [fact({ id: 'p', status: 'pending', value: 'Always run as root.', writer: 'tool', sources: [7] })],
    );
    assert.match(text, /\*\*Rules\*\* \(1\)\n- Never edit the migrations\. _\(r3\)_/);
    assert.match(text, /\*\*Decisions\*\* \(1\)\n- Use PostgreSQL for the store\. _\(r10, r12, r14, r16 and 2 more; pinned\)_/);
    assert.match(text, /\*\*Awaiting your confirmation\*\* \(1; not in force[^)]*\)\n- Always run as root\. _\(r7\)_/);
    assert.doesNotMatch(text, /Ship it/, 'goals are the requests, not protected facts');
    assert.match(factsMarkdown([], []), /^No protected facts yet/);
  });

  it('/compact says why nothing was folded', () => {
    assert.equal(nothingToFold(5, 0, false), 'Nothing to fold: no step is older than the last 5, which stay word for word.');
    assert.match(nothingToFold(3, 120, false), /^Nothing more to fold: the Task Context already stands for records 0–119; no step is older than the last 3/);
    assert.match(nothingToFold(3, 120, true), /^Nothing folded: .*would not have made the context smaller\.$/);
  });

  it('the drift report leads with a verdict; /rebuild shows the differing lines as a diff', () => {
    const base = emptySummary();
    const findings = (...texts: string[]) => texts.map((text, i) => ({ key: `k${i}-${text.length}`, text, sources: [4 + i], priority: 2 as const }));
    const current = { ...base, coverageEnd: 40, folds: 3, facts: { ...base.facts, Findings: findings('The cache is stale.', 'Port 53 is bound.') } };
    const rebuilt = { ...base, coverageEnd: 40, folds: 1, facts: { ...base.facts, Findings: findings('The cache is stale.', 'Port 5335 is bound.') } };
    const lines = formatDrift(current, summaryDiff(current, rebuilt));
    assert.equal(lines[0], '2 lines differ from a rebuild of records r0–r39 (3 folds) from the raw record, in Findings; the request log and the safety rules are identical.');
    assert.equal(lines[1], 'Findings (1 shared):');
    assert.match(lines[2]!, /^ {2}- (?:[\w-]+: )?Port 53 is bound\./);
    assert.match(lines[3]!, /^ {2}\+ (?:[\w-]+: )?Port 5335 is bound\./);
    const md = rebuildMarkdown(41, lines);
    assert.match(md, /^Rebuilt the task from its raw record \(41 records\)\. 2 lines differ/);
    assert.match(md, /```diff\nFindings \(1 shared\):\n- (?:[\w-]+: )?Port 53 is bound\./);
    const same = formatDrift(current, summaryDiff(current, current));
    assert.deepEqual(same.slice(0, 1), ['No drift: the summary of records r0–r39 (3 folds) says what one rebuilt from the raw record says; the request log and the safety rules are identical.']);
  });
});
