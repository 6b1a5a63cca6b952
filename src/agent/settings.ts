/**
 * The extension's settings, validated. Every field has the design's default;
 * an invalid value is reported by name and replaced by its default (a bad
 * setting never stops the agent).
 */
import * as z from '../core/schema';
import type { TaskSessionOptions } from './taskSession';
import { PRECOMPACT_MIN_CHARS } from '../core/tools';
import { COMPACTION_STOP_RATIO, COMPACTION_TRIGGER_RATIO, OUTPUT_RESERVED_TOKENS } from '../core/budget';

export const SETTINGS_SECTION = 'contextKeeper';

/** Every setting, declared once: package.json's contributes.configuration must say the same (test/unit/settingsDeclared.test.ts). */
const declareSettings = () =>
  ({
    /** 0 = the model's own maxInputTokens. */
    windowTokens: z._default(z.int().check(z.minimum(0), z.maximum(10_000_000)), 0),
    /** 0 = automatic: an eighth of the window, at most OUTPUT_RESERVED_TOKENS. */
    reserveTokens: z._default(z.int().check(z.minimum(0), z.maximum(1_000_000)), 0),
    /** 0 = automatic (core/budget defaultBudget): the seed's 0.65, or 0.9 on windows up to 32k. */
    triggerRatio: z._default(z.number().check(z.minimum(0), z.maximum(1)), 0),
    /** 0 = automatic: 0.5. */
    stopRatio: z._default(z.number().check(z.minimum(0), z.lt(1)), 0),
    /** 0 = automatic: 5 steps, or 3 on windows up to 32k. */
    nearWindowSteps: z._default(z.int().check(z.minimum(0), z.maximum(50)), 0),
    /** 0 = automatic: a quarter of the effective window, 3,000 to 8,000 (core/budget summaryCapFor). */
    summaryBudgetTokens: z._default(z.int().check(z.minimum(0), z.maximum(50_000), z.refine((v) => v === 0 || v >= 500, 'at least 500 tokens, or 0 for automatic')), 0),
    /** A model id (or family) for floor summaries; empty = the chat's model. 'none' = deterministic only. */
    summarizerModel: z._default(z.string().check(z.maxLength(200)), ''),
    summarizerTimeoutSeconds: z._default(z.int().check(z.minimum(5), z.maximum(600)), 60),
    maxStepsPerTurn: z._default(z.int().check(z.minimum(1), z.maximum(200)), 25),
    commandTimeoutSeconds: z._default(z.int().check(z.minimum(1), z.maximum(1800)), 120),
    toolOutputMaxChars: z._default(z.int().check(z.minimum(1_000), z.maximum(5_000_000)), 100_000),
    /** Old tool calls shorter than this (input + output, characters) are never shrunk. */
    toolOutputShrinkChars: z._default(z.int().check(z.minimum(200), z.maximum(1_000_000)), PRECOMPACT_MIN_CHARS),
    /** run_command runs in a terminal with shell integration (false: always in the background with /bin/sh). */
    runCommandsInTerminal: z._default(z.boolean(), true),
    /** Command prefixes run_command runs without asking (one simple command each; see tools/confirmation.ts allowListed). */
    allowedCommands: z._default(z.array(z.string().check(z.minLength(1), z.maxLength(500))).check(z.maxLength(200)), []),
    /** Other extensions' and MCP servers' tools @keeper offers its model, by name (`*` matches any run of characters). */
    otherTools: z._default(z.array(z.string().check(z.minLength(1), z.maxLength(200))).check(z.maxLength(200)), []),
  }) as const;

/** Whether a tool's name matches one of the `otherTools` patterns (`*` is any run of characters, `mcp_*`, `*`). */
export function matchesToolPattern(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(name));
}

type SettingFields = ReturnType<typeof declareSettings>;
let fields: SettingFields | undefined;
/** The settings' schemas, built at the first read of the settings (not while the extension activates). */
export const settingFields = (): SettingFields => (fields ??= declareSettings());
export type KeeperSettings = { readonly [K in keyof SettingFields]: z.infer<SettingFields[K]> };

/** Validates raw values (as `getConfiguration` returns them) field by field. */
export function parseSettings(read: (key: string) => unknown): { settings: KeeperSettings; problems: string[] } {
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(settingFields())) {
    const raw = read(key);
    const parsed = schema.safeParse(raw);
    if (parsed.success) out[key] = parsed.data;
    else {
      out[key] = schema.parse(undefined);
      problems.push(`${SETTINGS_SECTION}.${key}: ${parsed.error.issues[0]?.message ?? 'invalid'} (got ${JSON.stringify(raw)}); using ${JSON.stringify(out[key])}`);
    }
  }
  const settings = out as KeeperSettings;
  // Ratios are set together: one alone takes the other's automatic value, which must still lie on the right side.
  const trigger = settings.triggerRatio || COMPACTION_TRIGGER_RATIO;
  const stop = settings.stopRatio || COMPACTION_STOP_RATIO;
  if ((settings.triggerRatio || settings.stopRatio) && stop >= trigger) {
    problems.push(`${SETTINGS_SECTION}.stopRatio (${stop}) must be below triggerRatio (${trigger}); using the automatic ratios`);
    return { settings: { ...settings, stopRatio: 0, triggerRatio: 0 }, problems };
  }
  return { settings, problems };
}

/** The window and reserve the engine budgets against, for a model of `modelWindow` input tokens. */
export function windowFor(settings: KeeperSettings, modelWindow: number): { window: number; reserve: number } {
  const window = settings.windowTokens > 0 ? settings.windowTokens : modelWindow;
  const automatic = Math.min(OUTPUT_RESERVED_TOKENS, Math.floor(window / 8));
  const reserve = settings.reserveTokens > 0 ? Math.min(settings.reserveTokens, Math.floor(window / 2)) : automatic;
  return { window, reserve };
}

/** The session options of a task for these settings and a model of `modelWindow` input tokens: one rule for turns, panel and commands. */
export function sessionOptionsFor(settings: KeeperSettings, modelWindow: number): TaskSessionOptions {
  const { window, reserve } = windowFor(settings, modelWindow);
  return {
    window,
    reserve,
    // 0 = automatic: the budget's own defaults for this window (core/budget defaultBudget).
    ...(settings.triggerRatio || settings.stopRatio ? { triggerRatio: settings.triggerRatio || COMPACTION_TRIGGER_RATIO, stopRatio: settings.stopRatio || COMPACTION_STOP_RATIO } : {}),
    ...(settings.nearWindowSteps ? { protectRecentSteps: settings.nearWindowSteps } : {}),
    ...(settings.summaryBudgetTokens ? { summaryCap: settings.summaryBudgetTokens } : {}),
    shrinkMinChars: settings.toolOutputShrinkChars,
  };
}
