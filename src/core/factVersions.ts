/**
 * The protected state's record of its facts: every version ever written, in
 * order (the audit), each fact's versions oldest first, and each fact's latest
 * version in order of first appearance. The lists of facts (all, active,
 * pending) are computed once per revision.
 */
import type { Fact } from './state';

interface FactLists {
  revision: number;
  readonly all: Fact[];
  readonly active: Fact[];
  readonly pending: Fact[];
}

export class FactVersions {
  private readonly latest = new Map<string, Fact>();
  /** Fact ids in order of first appearance. */
  private readonly order: string[] = [];
  private readonly history: Fact[] = [];
  /** Every version of each fact, oldest first (the block shows a fact as it stood at the fold). */
  private readonly versions = new Map<string, Fact[]>();
  private versionCounter = 0;
  private listed: FactLists | undefined;

  /** Bumped by every version kept. */
  get revision(): number {
    return this.versionCounter;
  }

  has(id: string): boolean {
    return this.latest.has(id);
  }

  /** The latest version of a fact. */
  get(id: string): Fact | undefined {
    return this.latest.get(id);
  }

  /** Every version of every fact, in the order they were written. */
  audit(): readonly Fact[] {
    return this.history;
  }

  /** Every version of one fact, oldest first. */
  versionsOf(id: string): readonly Fact[] {
    return this.versions.get(id) ?? [];
  }

  /**
   * A version written: the latest of its fact (a new fact goes last in the
   * order), in the audit and among its fact's versions. A new fact only
   * extends the lists; a changed one has them computed again when next read.
   */
  keep(fact: Fact): void {
    const isNew = !this.latest.has(fact.id);
    if (isNew) this.order.push(fact.id);
    this.latest.set(fact.id, fact);
    this.history.push(fact);
    const list = this.versions.get(fact.id);
    if (list) list.push(fact);
    else this.versions.set(fact.id, [fact]);
    this.versionCounter++;
    const listed = this.listed;
    if (isNew && listed?.revision === this.versionCounter - 1) {
      listed.all.push(fact);
      if (fact.status === 'active') listed.active.push(fact);
      else if (fact.status === 'pending') listed.pending.push(fact);
      listed.revision = this.versionCounter;
    }
  }

  /** The lists of facts at this revision: rendering at every call does not walk every fact again. */
  lists(): { all: readonly Fact[]; active: readonly Fact[]; pending: readonly Fact[] } {
    if (this.listed?.revision !== this.versionCounter) {
      const all = this.order.map((id) => this.latest.get(id)!);
      this.listed = { revision: this.versionCounter, all, active: all.filter((f) => f.status === 'active'), pending: all.filter((f) => f.status === 'pending') };
    }
    return this.listed;
  }
}
