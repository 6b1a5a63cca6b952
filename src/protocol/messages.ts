/**
 * Every message between the Task Context panel (webview) and the extension
 * host, declared once: a zod schema and its type. The host parses every inbound
 * message with `parseWebviewMessage` (webview input is untrusted); the webview
 * trusts the host's messages, which it receives typed.
 *
 * Handshake: the webview posts `ready`; the host answers `state/full` with the
 * whole snapshot, then `state/patch` with only the sections that changed.
 *
 * Every schema is `z.lazy`: it is built when a message is first parsed, not
 * while the extension activates.
 */
import { FACT_STATUSES, FACT_TYPES, WRITERS } from '../core/factKinds';
import * as z from '../core/schema';
import { FILTER_MAX_CHARS, PAGED_LISTS } from './view';

export { artifactSearchText, emptyPages, FILTER_MAX_CHARS, normalizeFilter, notLoadedSearchText, PAGE_SIZE, PAGED_LISTS, type PagedList } from './view';

// ---------------------------------------------------------------- the snapshot

export const SECTION_ORDER = ['Requests', 'Deliverables', 'Decisions', 'Constraints', 'Ruled out', 'Findings', 'Archived', 'Current state'] as const;

export const SummaryLineSchema = z.lazy(() =>
  z.object({
    /** Stable topic key (the address of the line across folds). */
    key: z.string(),
    text: z.string(),
    sources: z.array(z.int().check(z.minimum(0))),
    /** 0 = never demoted (the user's words) … 3 = first to go to Archived. */
    priority: z.int().check(z.minimum(0), z.maximum(3)),
    /** How the line was written: the user's words kept verbatim, extracted by rule, or written by a model. */
    confidence: z.enum(['verbatim', 'extracted', 'model']),
  }),
);
export type SummaryLineView = z.infer<typeof SummaryLineSchema>;

export const SectionSchema = z.lazy(() =>
  z.object({
    name: z.enum(SECTION_ORDER),
    lines: z.array(SummaryLineSchema),
  }),
);
export type SectionView = z.infer<typeof SectionSchema>;

export const FactSchemaView = z.lazy(() =>
  z.object({
    id: z.string(),
    type: z.enum(FACT_TYPES),
    value: z.string(),
    status: z.enum(FACT_STATUSES),
    version: z.int().check(z.minimum(1)),
    writer: z.enum(WRITERS),
    pinned: z.boolean(),
    sources: z.array(z.int().check(z.minimum(-1))),
    reason: z.string(),
    /** Earlier versions, oldest first. */
    history: z.array(z.object({ version: z.int(), value: z.string(), status: z.string(), reason: z.string(), time: z.int() })),
  }),
);
export type FactView = z.infer<typeof FactSchemaView>;

export const BudgetSchema = z.lazy(() =>
  z.object({
    window: z.int().check(z.minimum(0)),
    effective: z.int().check(z.minimum(0)),
    trigger: z.int().check(z.minimum(0)),
    stop: z.int().check(z.minimum(0)),
    /** Tokens of the last context sent (the model's count when it gave one). */
    current: z.int().check(z.minimum(0)),
    /** Shares of `current`, in tokens. */
    blocks: z.object({
      overhead: z.int().check(z.minimum(0)),
      protectedState: z.int().check(z.minimum(0)),
      summary: z.int().check(z.minimum(0)),
      retrieved: z.int().check(z.minimum(0)),
      evidence: z.int().check(z.minimum(0)),
      rawTail: z.int().check(z.minimum(0)),
    }),
  }),
);
export type BudgetView = z.infer<typeof BudgetSchema>;

export const NotLoadedSchema = z.lazy(() =>
  z.object({
    address: z.string(),
    kind: z.enum(['tool', 'text', 'reasoning', 'span']),
    toolCallId: z.optional(z.string()),
    /** The tool and what the call was about (its command or first file). */
    tool: z.optional(z.string()),
    subject: z.optional(z.string()),
    /** The record the part starts at, and how many records the task has had since (its age). */
    record: z.optional(z.int().check(z.minimum(0))),
    age: z.optional(z.int().check(z.minimum(0))),
    tokens: z.int().check(z.minimum(0)),
    how: z.enum(['shrunk', 'dropped', 'folded']),
    recover: z.string(),
  }),
);
export type NotLoadedView = z.infer<typeof NotLoadedSchema>;

export const ArtifactSchema = z.lazy(() =>
  z.object({
    path: z.string(),
    reads: z.int().check(z.minimum(0)),
    modifications: z.int().check(z.minimum(0)),
    creations: z.int().check(z.minimum(0)),
    steps: z.array(z.int()),
  }),
);
export type ArtifactView = z.infer<typeof ArtifactSchema>;

export const CompactionSchema = z.lazy(() =>
  z.object({
    atRecord: z.int().check(z.minimum(0)),
    tier: z.int().check(z.minimum(1), z.maximum(4)),
    before: z.int().check(z.minimum(0)),
    after: z.int().check(z.minimum(0)),
    reactive: z.boolean(),
    /** The loss ledger at this boundary, when one was taken. */
    ledger: z.optional(z.object({ retained: z.int(), superseded: z.int(), omitted: z.int(), unsupported: z.int() })),
  }),
);
export type CompactionView = z.infer<typeof CompactionSchema>;

export const TaskSchema = z.lazy(() =>
  z.object({
    id: z.string(),
    title: z.string(),
    records: z.int().check(z.minimum(0)),
    running: z.boolean(),
  }),
);

export const PageSchema = z.lazy(() =>
  z.object({
    /** Entries in the whole list. */
    total: z.int().check(z.minimum(0)),
    /** Entries that match the panel's filter (the total when there is none); the list sent is the first of them. */
    matching: z.int().check(z.minimum(0)),
    /** Tokens of the whole list (evidence not loaded; 0 for the others). */
    tokens: z.int().check(z.minimum(0)),
  }),
);
export type PageView = z.infer<typeof PageSchema>;

/** Everything the panel shows for one task; sections are patched independently. */
export const PanelStateSchema = z.lazy(() =>
  z.object({
    task: z.nullable(TaskSchema),
    sections: z.array(SectionSchema),
    facts: z.array(FactSchemaView),
    budget: z.nullable(BudgetSchema),
    notLoaded: z.array(NotLoadedSchema),
    artifacts: z.array(ArtifactSchema),
    compactions: z.array(CompactionSchema),
    /** How much of each paged list was sent (`notLoaded` and `artifacts` from the start, `compactions` the newest). */
    pages: z.object({ notLoaded: PageSchema, artifacts: PageSchema, compactions: PageSchema }),
    /** Notices for the user (a protected block over its budget, a failed action…). */
    notices: z.array(z.string()),
    /** The drift report of the last forced rebuild, line by line. */
    drift: z.nullable(z.array(z.string())),
  }),
);
export type PanelState = z.infer<typeof PanelStateSchema>;
export type PanelSectionKey = keyof PanelState;

// ---------------------------------------------------------------- host → webview

export type HostMessage =
  | { readonly type: 'state/full'; readonly state: PanelState }
  | { readonly type: 'state/patch'; readonly patch: Partial<PanelState> }
  /** The result of an action the webview asked for (for focus and announcements). */
  | { readonly type: 'action/result'; readonly requestId: string; readonly ok: boolean; readonly message: string }
  /** Show the compaction made before record `atRecord` (a chat's compaction line was followed): its region opened, scrolled to, marked. */
  | { readonly type: 'reveal'; readonly atRecord: number };

// ---------------------------------------------------------------- webview → host

const FactId = z.string().check(z.minLength(1), z.maxLength(200));
const RequestId = z.string().check(z.minLength(1), z.maxLength(64));
/**
 * The task the webview showed when the user acted (the id of the `state/full`
 * it rendered). The host follows the chat, so its shown task can change just
 * before the webview redraws; an action whose task is not the one last posted
 * is refused, never applied to another task (fact ids are content hashes: the
 * same rule has the same id in every task).
 */
const TaskId = z.string().check(z.minLength(1), z.maxLength(200));

export const WebviewMessageSchema = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('ready') }),
    z.strictObject({ type: z.literal('fact/correct'), requestId: RequestId, taskId: TaskId, factId: FactId, value: z.string().check(z.trim(), z.minLength(1), z.maxLength(4000)) }),
    z.strictObject({ type: z.literal('fact/pin'), requestId: RequestId, taskId: TaskId, factId: FactId }),
    z.strictObject({ type: z.literal('fact/supersede'), requestId: RequestId, taskId: TaskId, factId: FactId }),
    z.strictObject({ type: z.literal('fact/delete'), requestId: RequestId, taskId: TaskId, factId: FactId }),
    z.strictObject({ type: z.literal('pending/confirm'), requestId: RequestId, taskId: TaskId, factId: FactId }),
    z.strictObject({ type: z.literal('pending/reject'), requestId: RequestId, taskId: TaskId, factId: FactId }),
    z.strictObject({ type: z.literal('open/record'), taskId: TaskId, record: z.int().check(z.minimum(0), z.maximum(100_000_000)) }),
    z.strictObject({ type: z.literal('open/toolCall'), taskId: TaskId, toolCallId: z.string().check(z.minLength(1), z.maxLength(500)) }),
    z.strictObject({ type: z.literal('open/file'), path: z.string().check(z.minLength(1), z.maxLength(4000)) }),
    z.strictObject({ type: z.literal('rebuild'), requestId: RequestId, taskId: TaskId }),
    /** Send the next page of a long list. */
    z.strictObject({ type: z.literal('list/more'), taskId: TaskId, list: z.enum(PAGED_LISTS) }),
    /** The panel's filter changed: the long lists are paged by what matches it. */
    z.strictObject({ type: z.literal('view/filter'), text: z.string().check(z.maxLength(FILTER_MAX_CHARS)) }),
  ]),
);
export type WebviewMessage = z.infer<typeof WebviewMessageSchema>;

/** Parses an inbound message; a clear reason when it is not one the panel sends. */
export function parseWebviewMessage(raw: unknown): { ok: true; message: WebviewMessage } | { ok: false; error: string } {
  const parsed = WebviewMessageSchema.safeParse(raw);
  if (parsed.success) return { ok: true, message: parsed.data };
  const type = raw && typeof raw === 'object' && 'type' in raw ? JSON.stringify((raw as { type: unknown }).type).slice(0, 60) : 'none';
  return { ok: false, error: `rejected a panel message (type ${type}): ${parsed.error.issues.map((i) => `${i.path.join('.') || 'message'}: ${i.message}`).join('; ')}` };
}
