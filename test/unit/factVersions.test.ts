import { strict as assert } from 'node:assert';
import { BlockFacts } from '../../src/core/blockFacts';
import { FactVersions } from '../../src/core/factVersions';
import type { Fact } from '../../src/core/state';

function fact(id: string, version: number, status: Fact['status'] = 'active'): Fact {
  return { id, type: 'constraint', value: `rule ${id} v${version}`, sources: [version], writer: 'user', time: version, scope: 'session', version, status, pinned: false, reason: 'test' };
}

describe('factVersions: every version of every fact', () => {
  it('keeps the audit, each fact’s versions and its latest, in order of first appearance', () => {
    const facts = new FactVersions();
    facts.keep(fact('a', 1));
    facts.keep(fact('b', 1, 'pending'));
    facts.keep(fact('a', 2, 'superseded'));
    assert.equal(facts.revision, 3);
    assert.deepEqual(facts.audit().map((f) => `${f.id}${f.version}`), ['a1', 'b1', 'a2']);
    assert.deepEqual(facts.versionsOf('a').map((f) => f.version), [1, 2]);
    assert.deepEqual(facts.versionsOf('z'), []);
    assert.equal(facts.get('a')!.version, 2);
    assert.equal(facts.has('b'), true);
    const lists = facts.lists();
    assert.deepEqual(lists.all.map((f) => f.id), ['a', 'b']);
    assert.deepEqual(lists.active, []);
    assert.deepEqual(lists.pending.map((f) => f.id), ['b']);
  });

  it('computes the lists once per revision, extends them for a new fact, computes them again for a change', () => {
    const facts = new FactVersions();
    facts.keep(fact('a', 1));
    const first = facts.lists();
    assert.equal(facts.lists(), first, 'the same revision');
    facts.keep(fact('b', 1));
    const extended = facts.lists();
    assert.equal(extended, first, 'a new fact extends the lists in place');
    assert.deepEqual(extended.active.map((f) => f.id), ['a', 'b']);
    facts.keep(fact('a', 2, 'deleted'));
    const recomputed = facts.lists();
    assert.notEqual(recomputed, first);
    assert.deepEqual(recomputed.active.map((f) => f.id), ['b']);
    assert.deepEqual(recomputed.all.map((f) => `${f.id}${f.version}`), ['a2', 'b1']);
  });
});

describe('blockFacts: the facts the block may show', () => {
  it('lists them in order of first appearance, whenever they became showable', () => {
    const block = new BlockFacts();
    block.track('goal', false);
    block.track('rule', true);
    block.track('plan', false);
    block.track('later', true);
    assert.deepEqual(block.inOrder(), ['rule', 'later']);
    // A fact seen before becomes showable (pinned by the user): it takes its first-appearance place.
    block.track('plan', true);
    block.track('rule', false);
    assert.equal(block.has('plan'), true);
    assert.equal(block.has('goal'), false);
    assert.deepEqual(block.inOrder(), ['rule', 'plan', 'later']);
  });
});
