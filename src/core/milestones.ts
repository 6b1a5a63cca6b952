/**
 * Triggers beyond the watermark: moments when the session reaches a stable
 * point — tests green after red, a todo item done, the user saying "thanks,
 * next", a switch of topic, a high-value event (a commit, a deploy) — recorded
 * as milestone snapshots, so there are stable checkpoints to compare against
 * and roll back to, apart from the budget-driven compactions.
 */
import { sharedWords } from './digest';
import { terms } from './retrieval';
import { exitCode, shellCommand, TEST_COMMAND } from './tools';
import type { Part, Unit } from './types';
import type { Redactor } from './redact';

export type MilestoneReason = 'tests-green' | 'todo-done' | 'user-next' | 'topic-switch' | 'high-value';

export interface Milestone {
  readonly record: number;
  readonly reason: MilestoneReason;
  readonly detail: string;
}

const THANKS_NEXT = /^\s*(thanks|thank you|thx|great|perfect|nice|good job|looks good|lgtm)\b.*\b(next|now|moving on|let'?s)\b|^\s*(next|moving on|now let'?s)\b/i;
const HIGH_VALUE = /\b(git commit|git push|git tag|npm publish|deploy|kubectl apply|terraform apply|docker push|migrate)\b/i;
/** Below this share of shared terms, a new request is about something else. */
const TOPIC_OVERLAP = 0.1;

export class MilestoneDetector {
  private readonly failing = new Set<string>();
  private lastRequestTerms: Set<string> | undefined;
  private readonly found: Milestone[] = [];

  /** `redactor` hides secrets in the words a milestone quotes. */
  constructor(private readonly redactor: Redactor) {}

  get milestones(): readonly Milestone[] {
    return this.found;
  }

  /** Looks at one part as it arrives (tool parts once their result is there); returns a new milestone, if any. */
  observe(kind: Unit['kind'], part: Part): Milestone | undefined {
    if (kind === 'user' && part.kind === 'text') return this.user(part);
    if (part.kind === 'tool' && part.tool?.output !== undefined) return this.tool(part);
    return undefined;
  }

  private add(m: Milestone): Milestone {
    this.found.push(m);
    return m;
  }

  private user(part: Part): Milestone | undefined {
    const text = part.text.trim();
    if (!text) return undefined;
    if (THANKS_NEXT.test(text)) {
      this.lastRequestTerms = terms(text);
      return this.add({ record: part.record, reason: 'user-next', detail: this.redactor.redact(text.split('\n')[0]!.slice(0, 4096)).text.slice(0, 120) });
    }
    const now = terms(text);
    const before = this.lastRequestTerms;
    this.lastRequestTerms = now;
    if (!before || before.size < 3 || now.size < 3) return undefined;
    if (sharedWords(now, before) / Math.min(before.size, now.size) < TOPIC_OVERLAP) {
      return this.add({ record: part.record, reason: 'topic-switch', detail: this.redactor.redact(text.split('\n')[0]!.slice(0, 4096)).text.slice(0, 120) });
    }
    return undefined;
  }

  private tool(part: Part): Milestone | undefined {
    const tool = part.tool!;
    const record = tool.resultRecord ?? tool.callRecord;
    const cmd = shellCommand(tool);
    if (cmd !== undefined) {
      const code = exitCode(tool);
      const key = cmd.trim().split(/\s+/).slice(0, 3).join(' ');
      const failed = tool.isError || (code !== undefined && code !== 0);
      if (TEST_COMMAND.test(cmd)) {
        if (failed) this.failing.add(key);
        else if (code === 0 && this.failing.delete(key)) return this.add({ record, reason: 'tests-green', detail: `\`${key}\` passes again` });
      }
      if (!failed && code === 0 && HIGH_VALUE.test(cmd)) return this.add({ record, reason: 'high-value', detail: `\`${cmd.split('\n')[0]!.slice(0, 100)}\`` });
      return undefined;
    }
    if (/todo/i.test(tool.name)) {
      const input = tool.input as { todos?: { status?: string; content?: string }[] } | undefined;
      const done = input?.todos?.filter((t) => t.status === 'completed').length ?? 0;
      const previous = this.todoDone;
      this.todoDone = done;
      if (done > previous) return this.add({ record, reason: 'todo-done', detail: `${done} todo item(s) done` });
    }
    return undefined;
  }

  private todoDone = 0;
}
