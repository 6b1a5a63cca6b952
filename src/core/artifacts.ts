/**
 * The artifact index: per file, the reads, modifications and creations seen in
 * tool calls, with the steps and calls that touched them. It lives beside the
 * summary, not in it, so the file trail never decays with folding.
 */
import { fileTouches } from './tools';
import type { ToolInvocation } from './types';

export interface ArtifactEntry {
  readonly path: string;
  readonly reads: number;
  readonly modifications: number;
  readonly creations: number;
  /** Steps (0-based ordinals) that touched the file, in order. */
  readonly steps: readonly number[];
  /** Tool call ids that touched the file, in order. */
  readonly toolCalls: readonly string[];
  /** Record of the first touch. */
  readonly firstRecord: number;
}

interface MutableEntry {
  path: string;
  reads: number;
  modifications: number;
  creations: number;
  steps: number[];
  toolCalls: string[];
  firstRecord: number;
}

export class ArtifactIndex {
  private readonly byPath = new Map<string, MutableEntry>();

  /** Records the files one tool call touched (called once per call); returns their paths. */
  observe(tool: ToolInvocation, step: number | undefined): string[] {
    const touched: string[] = [];
    for (const touch of fileTouches(tool)) {
      touched.push(touch.path);
      let entry = this.byPath.get(touch.path);
      if (!entry) {
        entry = { path: touch.path, reads: 0, modifications: 0, creations: 0, steps: [], toolCalls: [], firstRecord: tool.callRecord };
        this.byPath.set(touch.path, entry);
      }
      if (touch.access === 'read') entry.reads++;
      else if (touch.access === 'create') entry.creations++;
      else entry.modifications++;
      if (step !== undefined && entry.steps[entry.steps.length - 1] !== step) entry.steps.push(step);
      if (entry.toolCalls[entry.toolCalls.length - 1] !== tool.callId) entry.toolCalls.push(tool.callId);
    }
    return touched;
  }

  get(path: string): ArtifactEntry | undefined {
    return this.byPath.get(path);
  }

  /** Entries in order of first touch. */
  entries(): ArtifactEntry[] {
    return [...this.byPath.values()].sort((a, b) => a.firstRecord - b.firstRecord || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  get size(): number {
    return this.byPath.size;
  }
}
