/**
 * Every message between the Task Context panel (webview) and the extension
 * host, declared once: a zod schema and its type. The host parses every inbound
 * message with `parseWebviewMessage` (webview input is untrusted); the webview
 * trusts the host's messages, which it receives typed.
 *
 * Handshake: the webview posts `ready`; the host answers `state/full` with the
 * whole snapshot, then `state/patch` with only the sections that changed.
 */
import { z } from 'zod';
import { emptyPages, FILTER_MAX_CHARS, PAGED_LISTS } from './view';

export { artifactSearchText, emptyPages, FILTER_MAX_CHARS, normalizeFilter, notLoadedSearchText, PAGE_SIZE, PAGED_LISTS, type PagedList } from './view';

// ---------------------------------------------------------------- the snapshot

export const SECTION_ORDER = ['Requests', 'Deliverables', 'Decisions', 'Constraints', 'Ruled out', 'Findings', 'Archived', 'Current state'] as const;

export const SummaryLineSchema = z.object({
  /** Stable topic key (the address of the line across folds). */
  key: z.string(),
  text: z.string(),
  sources: z.array(z.number().int().min(0)),
  /** 0 = never demoted (the user's words) … 3 = first to go to Archived. */
  priority: z.number().int().min(0).max(3),
  /** How the line was written: the user's words kept verbatim, extracted by rule, or written by a model. */
  confidence: z.enum(['verbatim', 'extracted', 'model']),
});
export type SummaryLineView = z.infer<typeof SummaryLineSchema>;

export const SectionSchema = z.object({
  name: z.enum(SECTION_ORDER),
  lines: z.array(SummaryLineSchema),
});
export type SectionView = z.infer<typeof SectionSchema>;

export const FactSchemaView = z.object({
  id: z.string(),
  type: z.enum(['goal', 'constraint', 'permission', 'decision', 'open_issue', 'completed_effect', 'preference', 'evidence_ref']),
  value: z.string(),
  status: z.enum(['active', 'superseded', 'pending', 'deleted']),
  version: z.number().int().min(1),
  writer: z.enum(['user', 'model', 'tool', 'policy']),
  pinned: z.boolean(),
  sources: z.array(z.number().int().min(-1)),
  reason: z.string(),
  /** Earlier versions, oldest first. */
  history: z.array(z.object({ version: z.number().int(), value: z.string(), status: z.string(), reason: z.string(), time: z.number().int() })),
});
export type FactView = z.infer<typeof FactSchemaView>;

export const BudgetSchema = z.object({
  window: z.number().int().min(0),
  effective: z.number().int().min(0),
  trigger: z.number().int().min(0),
  stop: z.number().int().min(0),
  /** Tokens of the last context sent (the model's count when it gave one). */
  current: z.number().int().min(0),
  /** Shares of `current`, in tokens. */
  blocks: z.object({
    overhead: z.number().int().min(0),
    protectedState: z.number().int().min(0),
    summary: z.number().int().min(0),
    retrieved: z.number().int().min(0),
    evidence: z.number().int().min(0),
    rawTail: z.number().int().min(0),
  }),
});
export type BudgetView = z.infer<typeof BudgetSchema>;

export const NotLoadedSchema = z.object({
  address: z.string(),
  kind: z.enum(['tool', 'text', 'reasoning', 'span']),
  toolCallId: z.string().optional(),
  /** The tool and what the call was about (its command or first file). */
  tool: z.string().optional(),
  subject: z.string().optional(),
  /** The record the part starts at, and how many records the task has had since (its age). */
  record: z.number().int().min(0).optional(),
  age: z.number().int().min(0).optional(),
  tokens: z.number().int().min(0),
  how: z.enum(['shrunk', 'dropped', 'folded']),
  recover: z.string(),
});
export type NotLoadedView = z.infer<typeof NotLoadedSchema>;

export const ArtifactSchema = z.object({
  path: z.string(),
  reads: z.number().int().min(0),
  modifications: z.number().int().min(0),
  creations: z.number().int().min(0),
  steps: z.array(z.number().int()),
});
export type ArtifactView = z.infer<typeof ArtifactSchema>;

export const CompactionSchema = z.object({
  atRecord: z.number().int().min(0),
  tier: z.number().int().min(1).max(4),
  before: z.number().int().min(0),
  after: z.number().int().min(0),
  reactive: z.boolean(),
  /** The loss ledger at this boundary, when one was taken. */
  ledger: z.object({ retained: z.number().int(), superseded: z.number().int(), omitted: z.number().int(), unsupported: z.number().int() }).optional(),
});
export type CompactionView = z.infer<typeof CompactionSchema>;

export const TaskSchema = z.object({
  id: z.string(),
  title: z.string(),
  records: z.number().int().min(0),
  running: z.boolean(),
});

export const PageSchema = z.object({
  /** Entries in the whole list. */
  total: z.number().int().min(0),
  /** Entries that match the panel's filter (the total when there is none); the list sent is the first of them. */
  matching: z.number().int().min(0),
  /** Tokens of the whole list (evidence not loaded; 0 for the others). */
  tokens: z.number().int().min(0),
});
export type PageView = z.infer<typeof PageSchema>;

/** Everything the panel shows for one task; sections are patched independently. */
export const PanelStateSchema = z.object({
  task: TaskSchema.nullable(),
  sections: z.array(SectionSchema),
  facts: z.array(FactSchemaView),
  budget: BudgetSchema.nullable(),
  notLoaded: z.array(NotLoadedSchema),
  artifacts: z.array(ArtifactSchema),
  compactions: z.array(CompactionSchema),
  /** How much of each paged list was sent (`notLoaded` and `artifacts` from the start, `compactions` the newest). */
  pages: z.object({ notLoaded: PageSchema, artifacts: PageSchema, compactions: PageSchema }),
  /** Notices for the user (a protected block over its budget, a failed action…). */
  notices: z.array(z.string()),
  /** The drift report of the last forced rebuild, line by line. */
  drift: z.array(z.string()).nullable(),
});
export type PanelState = z.infer<typeof PanelStateSchema>;
export type PanelSectionKey = keyof PanelState;

export function emptyPanelState(): PanelState {
  return { task: null, sections: [], facts: [], budget: null, notLoaded: [], artifacts: [], compactions: [], pages: emptyPages(), notices: [], drift: null };
}

// ---------------------------------------------------------------- host → webview

export type HostMessage =
  | { readonly type: 'state/full'; readonly state: PanelState }
  | { readonly type: 'state/patch'; readonly patch: Partial<PanelState> }
  /** The result of an action the webview asked for (for focus and announcements). */
  | { readonly type: 'action/result'; readonly requestId: string; readonly ok: boolean; readonly message: string }
  /** Show the compaction made before record `atRecord` (a chat's compaction line was followed): its region opened, scrolled to, marked. */
  | { readonly type: 'reveal'; readonly atRecord: number };

// ---------------------------------------------------------------- webview → host

const FactId = z.string().min(1).max(200);
const RequestId = z.string().min(1).max(64);
/**
 * The task the webview showed when the user acted (the id of the `state/full`
 * it rendered). The host follows the chat, so its shown task can change just
 * before the webview redraws; an action whose task is not the one last posted
 * is refused, never applied to another task (fact ids are content hashes: the
 * same rule has the same id in every task).
 */
const TaskId = z.string().min(1).max(200);

export const WebviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }).strict(),
  z.object({ type: z.literal('fact/correct'), requestId: RequestId, taskId: TaskId, factId: FactId, value: z.string().trim().min(1).max(4000) }).strict(),
  z.object({ type: z.literal('fact/pin'), requestId: RequestId, taskId: TaskId, factId: FactId }).strict(),
  z.object({ type: z.literal('fact/supersede'), requestId: RequestId, taskId: TaskId, factId: FactId }).strict(),
  z.object({ type: z.literal('fact/delete'), requestId: RequestId, taskId: TaskId, factId: FactId }).strict(),
  z.object({ type: z.literal('pending/confirm'), requestId: RequestId, taskId: TaskId, factId: FactId }).strict(),
  z.object({ type: z.literal('pending/reject'), requestId: RequestId, taskId: TaskId, factId: FactId }).strict(),
  z.object({ type: z.literal('open/record'), taskId: TaskId, record: z.number().int().min(0).max(100_000_000) }).strict(),
  z.object({ type: z.literal('open/toolCall'), taskId: TaskId, toolCallId: z.string().min(1).max(500) }).strict(),
  z.object({ type: z.literal('open/file'), path: z.string().min(1).max(4000) }).strict(),
  z.object({ type: z.literal('rebuild'), requestId: RequestId, taskId: TaskId }).strict(),
  /** Send the next page of a long list. */
  z.object({ type: z.literal('list/more'), taskId: TaskId, list: z.enum(PAGED_LISTS) }).strict(),
  /** The panel's filter changed: the long lists are paged by what matches it. */
  z.object({ type: z.literal('view/filter'), text: z.string().max(FILTER_MAX_CHARS) }).strict(),
]);
export type WebviewMessage = z.infer<typeof WebviewMessageSchema>;
export type WebviewMessageType = WebviewMessage['type'];

/** Parses an inbound message; a clear reason when it is not one the panel sends. */
export function parseWebviewMessage(raw: unknown): { ok: true; message: WebviewMessage } | { ok: false; error: string } {
  const parsed = WebviewMessageSchema.safeParse(raw);
  if (parsed.success) return { ok: true, message: parsed.data };
  const type = raw && typeof raw === 'object' && 'type' in raw ? JSON.stringify((raw as { type: unknown }).type).slice(0, 60) : 'none';
  return { ok: false, error: `rejected a panel message (type ${type}): ${parsed.error.issues.map((i) => `${i.path.join('.') || 'message'}: ${i.message}`).join('; ')}` };
}
