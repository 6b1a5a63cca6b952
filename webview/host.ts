/**
 * The webview's side of the VS Code API: posting typed messages and keeping
 * the panel's UI state (collapsed groups, drafts, scroll, filter) across the
 * webview being hidden and shown again (`getState`/`setState`, rather than
 * `retainContextWhenHidden`).
 */
import type { WebviewMessage } from '../src/protocol/messages';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

/** What the panel remembers about itself; never part of the host's state. */
export interface UiState {
  readonly version: 1;
  /** The task these drafts belong to (drafts are dropped when another task is shown). */
  taskId: string | null;
  /** Collapsible id → open; ids not listed use their default. */
  open: Record<string, boolean>;
  /** Facts whose earlier versions are shown. */
  history: string[];
  /** Open correction editors: fact id → draft text. */
  drafts: Record<string, string>;
  scrollY: number;
  filter: string;
}

export function defaultUiState(): UiState {
  return { version: 1, taskId: null, open: {}, history: [], drafts: {}, scrollY: 0, filter: '' };
}

/** Reads a stored UI state field by field: a missing or malformed field takes its default. */
function reviveUiState(raw: unknown): UiState {
  const ui = defaultUiState();
  if (!raw || typeof raw !== 'object') return ui;
  const r = raw as Record<string, unknown>;
  if (typeof r['taskId'] === 'string') ui.taskId = r['taskId'];
  if (r['open'] && typeof r['open'] === 'object') {
    for (const [k, v] of Object.entries(r['open'] as Record<string, unknown>)) if (typeof v === 'boolean') ui.open[k] = v;
  }
  if (Array.isArray(r['history'])) ui.history = r['history'].filter((v): v is string => typeof v === 'string');
  if (r['drafts'] && typeof r['drafts'] === 'object') {
    for (const [k, v] of Object.entries(r['drafts'] as Record<string, unknown>)) if (typeof v === 'string') ui.drafts[k] = v;
  }
  if (typeof r['scrollY'] === 'number' && Number.isFinite(r['scrollY'])) ui.scrollY = r['scrollY'];
  if (typeof r['filter'] === 'string') ui.filter = r['filter'];
  return ui;
}

export class Host {
  private readonly api: VsCodeApi;
  readonly ui: UiState;
  private nextRequest = 1;
  private saveQueued = false;

  constructor() {
    this.api = acquireVsCodeApi();
    this.ui = reviveUiState(this.api.getState());
  }

  post(message: WebviewMessage): void {
    this.api.postMessage(message);
  }

  /** `r1`, `r2`, … for the actions whose result the host reports. */
  requestId(): string {
    return `r${this.nextRequest++}`;
  }

  /** Saves the UI state now. */
  save(): void {
    this.saveQueued = false;
    this.api.setState(this.ui);
  }

  /** Saves the UI state soon (many scroll events or keystrokes make one save). */
  saveSoon(): void {
    if (this.saveQueued) return;
    this.saveQueued = true;
    setTimeout(() => {
      if (this.saveQueued) this.save();
    }, 100);
  }
}
