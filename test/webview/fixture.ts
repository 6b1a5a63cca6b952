/**
 * A realistic Task Context panel state: the rate-limiting task of the sample
 * session (test/fixtures/sample-session.jsonl) part way through, with every
 * section of the panel filled in.
 */
import type { ArtifactView, CompactionView, FactView, NotLoadedView, PageView, PanelState, SectionView } from '../../src/protocol/messages';
import { PAGE_SIZE } from '../../src/protocol/view';

type FactInit = Pick<FactView, 'id' | 'type' | 'value'> & Partial<Omit<FactView, 'id' | 'type' | 'value'>>;

export function fact(init: FactInit): FactView {
  return { status: 'active', version: 1, writer: 'user', pinned: false, sources: [], reason: 'extracted from the user message', history: [], ...init };
}

/** Texts the tests look for. */
export const TEXT = {
  title: 'Add rate limiting to the public API',
  taskId: 'task-2026-11-29-rate-limit',
  constraint: 'Never change the public signature of handleRequest in src/api.ts.',
  constraintId: 'constraint-5f1c2a9be041',
  pinnedConstraintId: 'constraint-a03be77d21c4',
  permissionId: 'permission-0d6e51a2f7b3',
  decisionId: 'decision-91c04e3a55d2',
  openIssueId: 'open_issue-c2f7a8e09b14',
  pendingTool: 'Do not run the integration tests against production.',
  pendingToolId: 'constraint-7e2d9c0b4a61',
  pendingModel: 'From now on, always use the sliding-window limiter.',
  pendingModelId: 'decision-3b9f1e6d2c70',
  supersededId: 'decision-44aa10c3e9f8',
  deletedId: 'preference-e7c1a2b3d4f5',
  evidenceToolCall: 'toolu_01HkV6sX2mRk8q3Qn7yTb9Lf',
  evidenceText: 'text:9c1e0f4b2a77',
  artifact: 'src/middleware/rateLimiter.ts',
  notice: 'The protected block is over its budget (1,480 of 1,200 tokens): pin fewer facts or raise contextKeeper.summaryBudgetTokens.',
  driftVerdict: '2 lines differ from a rebuild of records r0–r240 (6 folds) from the raw record, in Decisions; the request log and the safety rules are identical.',
  driftLine: 'limiter-storage: in-memory token bucket (r88)',
} as const;

function sections(): SectionView[] {
  return [
    {
      name: 'Requests',
      lines: [
        { key: 'request-1', text: '#1 Add rate limiting to the public API: 100 requests per minute per API key, 429 with Retry-After when over.', sources: [0], priority: 0, confidence: 'verbatim' },
        { key: 'request-2', text: '#2 Make the limit configurable per route; /health must never be limited.', sources: [88], priority: 0, confidence: 'verbatim' },
        { key: 'request-3', text: '#3 Add tests for the burst case and run the whole suite.', sources: [176], priority: 0, confidence: 'verbatim' },
      ],
    },
    {
      name: 'Deliverables',
      lines: [
        { key: 'src/middleware/rateLimiter.ts', text: 'src/middleware/rateLimiter.ts: token bucket per API key, Retry-After header', sources: [41, 63, 120], priority: 1, confidence: 'extracted' },
        { key: 'test/rateLimiter.test.ts', text: 'test/rateLimiter.test.ts: burst, refill and /health exemption cases', sources: [190, 231], priority: 1, confidence: 'extracted' },
      ],
    },
    {
      name: 'Decisions',
      lines: [
        { key: 'limiter-storage', text: 'Keep the buckets in memory (one process); Redis was ruled out for now.', sources: [52], priority: 2, confidence: 'model' },
        { key: 'route-config', text: 'Per-route limits live in config/limits.json, loaded once at start.', sources: [97], priority: 2, confidence: 'extracted' },
      ],
    },
    {
      name: 'Constraints',
      lines: [
        { key: 'handle-request-signature', text: TEXT.constraint, sources: [0], priority: 0, confidence: 'verbatim' },
        { key: 'health-never-limited', text: '/health must never be limited.', sources: [88], priority: 0, confidence: 'verbatim' },
      ],
    },
    {
      name: 'Ruled out',
      lines: [{ key: 'redis-store', text: 'A Redis store: adds a service the deployment does not have (tried at r45, reverted at r52).', sources: [45, 52], priority: 2, confidence: 'model' }],
    },
    {
      name: 'Findings',
      lines: [
        { key: 'clock-skew', text: 'The refill test is flaky with the real clock; the fake clock in test/helpers.ts fixes it.', sources: [204, 212], priority: 3, confidence: 'extracted' },
        { key: 'express-version', text: 'The service runs Express 4.19; middleware order matters for /health.', sources: [30], priority: 3, confidence: 'extracted' },
      ],
    },
    {
      name: 'Archived',
      lines: [{ key: 'archive-group-r3-r27', text: 'project-layout, lint-setup, tsconfig-paths', sources: [3, 27], priority: 3, confidence: 'extracted' }],
    },
    {
      name: 'Current state',
      lines: [{ key: 'current', text: 'Burst test passing; running the whole suite (npm test) next.', sources: [262], priority: 1, confidence: 'model' }],
    },
  ];
}

function facts(): FactView[] {
  return [
    fact({ id: 'goal-1b2c3d4e5f60', type: 'goal', value: 'Add rate limiting to the public API: 100 requests per minute per API key.', sources: [0] }),
    fact({ id: TEXT.constraintId, type: 'constraint', value: TEXT.constraint, sources: [0] }),
    fact({
      id: TEXT.pinnedConstraintId,
      type: 'constraint',
      value: '/health must never be limited, not even under load.',
      sources: [88, 140],
      version: 2,
      pinned: true,
      reason: 'corrected by the user',
      history: [{ version: 1, value: '/health must never be limited.', status: 'active', reason: 'extracted from the user message', time: 88 }],
    }),
    fact({ id: TEXT.permissionId, type: 'permission', value: 'You may add a dev dependency for fake timers.', sources: [176] }),
    fact({ id: TEXT.decisionId, type: 'decision', value: 'Keep the buckets in memory instead of Redis.', writer: 'model', sources: [52], reason: 'the model decided' }),
    fact({ id: TEXT.openIssueId, type: 'open_issue', value: 'TODO: document the per-route limits in README.md.', writer: 'model', sources: [240], reason: 'open marker in the plan (todo)' }),
    fact({ id: 'completed_effect-7a8b9c0d1e2f', type: 'completed_effect', value: 'npm test -- rateLimiter: 14 passing (exit 0)', writer: 'tool', sources: [231], reason: 'a passing test run' }),
    fact({ id: 'preference-0a1b2c3d4e5f', type: 'preference', value: 'I prefer small commits with the tests beside the code.', sources: [176] }),
    fact({ id: TEXT.pendingToolId, type: 'constraint', value: TEXT.pendingTool, status: 'pending', writer: 'tool', sources: [118], reason: 'a rule in tool output (needs the user)' }),
    fact({ id: TEXT.pendingModelId, type: 'decision', value: TEXT.pendingModel, status: 'pending', writer: 'model', sources: [205], reason: 'a rule in model text (needs the user)' }),
    fact({
      id: TEXT.supersededId,
      type: 'decision',
      value: 'Use a Redis store for the buckets.',
      status: 'superseded',
      writer: 'model',
      version: 2,
      sources: [45],
      reason: 'reversed at r52',
      history: [{ version: 1, value: 'Use a Redis store for the buckets.', status: 'active', reason: 'the model decided', time: 45 }],
    }),
    fact({ id: TEXT.deletedId, type: 'preference', value: 'I like verbose logging.', status: 'deleted', version: 2, sources: [12], reason: 'deleted by the user', history: [{ version: 1, value: 'I like verbose logging.', status: 'active', reason: 'extracted from the user message', time: 12 }] }),
  ];
}

function notLoaded(): NotLoadedView[] {
  return [
    { address: 'span:r0-r119', kind: 'span', tokens: 48210, how: 'folded', recover: 'records r0–r119 (summarized in ## Task Context)' },
    { address: 'toolu_01Bq3Zx8mYp2Ld5Rw9Tc4Vn6', kind: 'tool', toolCallId: 'toolu_01Bq3Zx8mYp2Ld5Rw9Tc4Vn6', tool: 'Read', subject: 'src/middleware/rateLimit.ts', record: 64, age: 204, tokens: 6120, how: 'folded', recover: 'view_tool_call("toolu_01Bq3Zx8mYp2Ld5Rw9Tc4Vn6")' },
    { address: TEXT.evidenceToolCall, kind: 'tool', toolCallId: TEXT.evidenceToolCall, tool: 'Bash', subject: 'npm test -- --runInBand test/rateLimiter.test.ts', record: 231, age: 37, tokens: 12840, how: 'shrunk', recover: `view_tool_call("${TEXT.evidenceToolCall}")` },
    { address: 'toolu_01PmQ4rT8wXc2Vb6Ny1Lk3Jh', kind: 'tool', toolCallId: 'toolu_01PmQ4rT8wXc2Vb6Ny1Lk3Jh', tool: 'TodoWrite', record: 240, age: 28, tokens: 3391, how: 'dropped', recover: 'view_tool_call("toolu_01PmQ4rT8wXc2Vb6Ny1Lk3Jh")' },
    { address: TEXT.evidenceText, kind: 'reasoning', record: 214, age: 54, tokens: 1975, how: 'shrunk', recover: 'record r214' },
  ];
}

function artifacts(): ArtifactView[] {
  return [
    { path: TEXT.artifact, reads: 4, modifications: 3, creations: 1, steps: [41, 63, 64, 65, 120] },
    { path: 'test/rateLimiter.test.ts', reads: 2, modifications: 2, creations: 1, steps: [190, 231] },
    { path: 'src/api.ts', reads: 5, modifications: 1, creations: 0, steps: [2, 36, 37, 38, 140] },
    { path: 'config/limits.json', reads: 1, modifications: 0, creations: 1, steps: [97] },
    { path: 'package.json', reads: 2, modifications: 0, creations: 0, steps: [3, 176] },
  ];
}

function compactions(): CompactionView[] {
  return [
    { atRecord: 84, tier: 1, before: 81230, after: 59870, reactive: false },
    { atRecord: 121, tier: 2, before: 80140, after: 41260, reactive: false, ledger: { retained: 18, superseded: 2, omitted: 3, unsupported: 0 } },
    { atRecord: 203, tier: 1, before: 79920, after: 61480, reactive: false },
    { atRecord: 244, tier: 3, before: 121400, after: 57310, reactive: true, ledger: { retained: 24, superseded: 3, omitted: 5, unsupported: 1 } },
  ];
}

/** The panel state of the rate-limiting task at record 269. */
export function buildPanelState(overrides: Partial<PanelState> = {}): PanelState {
  const state: Omit<PanelState, 'pages'> = {
    task: { id: TEXT.taskId, title: TEXT.title, records: 269, running: true },
    sections: sections(),
    facts: facts(),
    budget: {
      window: 128000,
      effective: 120000,
      trigger: 78000,
      stop: 60000,
      current: 71540,
      blocks: { overhead: 3180, protectedState: 1480, summary: 2360, retrieved: 4120, evidence: 18900, rawTail: 41500 },
    },
    notLoaded: notLoaded(),
    artifacts: artifacts(),
    compactions: compactions(),
    notices: [TEXT.notice],
    drift: [TEXT.driftVerdict, 'Decisions (4 shared):', `  - ${TEXT.driftLine}`, '  + limiter-storage: in-memory sliding window (r88)', 'The same in both: Requests (3), Findings (7).', '"-" only in the current summary, "+" only in the rebuild.'],
    ...overrides,
  };
  // Everything is sent (the fixture is one page), unless the test sets the pages itself.
  const whole = (n: number, tokens = 0): PageView => ({ total: n, matching: n, tokens });
  return {
    ...state,
    pages: overrides.pages ?? {
      notLoaded: whole(state.notLoaded.length, state.notLoaded.reduce((sum, part) => sum + part.tokens, 0)),
      artifacts: whole(state.artifacts.length),
      compactions: whole(state.compactions.length),
    },
  };
}

/** A long task: `factCount` facts (every type, a few pinned, some with history) and `partCount` parts not loaded. */
export function buildBigPanelState(factCount: number, partCount: number): PanelState {
  const types: FactView['type'][] = ['goal', 'constraint', 'permission', 'decision', 'open_issue', 'completed_effect', 'preference'];
  const bigFacts: FactView[] = [];
  for (let i = 0; i < factCount; i++) {
    const type = types[i % types.length]!;
    const status: FactView['status'] = i % 50 === 7 ? 'pending' : i % 40 === 3 ? 'superseded' : 'active';
    bigFacts.push(
      fact({
        id: `${type}-big${String(i).padStart(5, '0')}`,
        type,
        value: `${type} number ${i}: keep the limiter behaviour for route /v1/items/${i} exactly as specified in the request of record ${i * 3}.`,
        status,
        writer: status === 'pending' ? 'tool' : i % 3 === 0 ? 'user' : 'model',
        pinned: i % 25 === 0,
        version: i % 10 === 0 ? 2 : 1,
        sources: [i * 3, i * 3 + 1],
        history: i % 10 === 0 ? [{ version: 1, value: `earlier wording ${i}`, status: 'active', reason: 'extracted', time: i * 3 }] : [],
      }),
    );
  }
  const parts: NotLoadedView[] = [];
  for (let i = 0; i < partCount; i++) {
    const id = `toolu_big${String(i).padStart(5, '0')}`;
    parts.push(i % 5 === 4 ? { address: `text:${i.toString(16).padStart(12, '0')}`, kind: 'text', tokens: 200 + i, how: 'shrunk', recover: `record r${i}` } : { address: id, kind: 'tool', toolCallId: id, tokens: 1000 + i * 7, how: i % 3 === 0 ? 'dropped' : 'shrunk', recover: `view_tool_call("${id}")` });
  }
  return buildPanelState({ facts: bigFacts, notLoaded: parts });
}

/**
 * The state the host sends for a task of 50,000 records (the shape measured
 * on a generated 50k-record task at a 16k window: about 670 facts and 670
 * summary lines, 16,329 parts not loaded, 686 files and 3,840 compactions),
 * with the first page of each long list.
 */
export function build50kPanelState(): PanelState {
  const big = buildBigPanelState(670, PAGE_SIZE);
  const requests: SectionView = {
    name: 'Requests',
    lines: Array.from({ length: 670 }, (_, i) => ({ key: `#${i + 1}`, text: `Now handle part ${i * 50} of the importer; keep the API stable.`, sources: [i * 50], priority: 0, confidence: 'verbatim' as const })),
  };
  const files: ArtifactView[] = Array.from({ length: PAGE_SIZE }, (_, i) => ({ path: `src/importer/part${i}.ts`, reads: 3 + (i % 4), modifications: i % 3, creations: 0, steps: [i * 70, i * 70 + 9] }));
  const timeline: CompactionView[] = Array.from({ length: PAGE_SIZE }, (_, i) => ({ atRecord: 49_000 + i * 10, tier: 2, before: 12_400, after: 7_900, reactive: false }));
  return {
    ...big,
    sections: [requests, ...big.sections.filter((s) => s.name !== 'Requests')],
    artifacts: files,
    compactions: timeline,
    pages: {
      notLoaded: { total: 16_329, matching: 16_329, tokens: 9_876_543 },
      artifacts: { total: 686, matching: 686, tokens: 0 },
      compactions: { total: 3_840, matching: 3_840, tokens: 0 },
    },
  };
}
