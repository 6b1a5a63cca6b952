/**
 * Typed access to the scripted fake model (test/integration/fakeModel/extension.js)
 * from the extension-host tests.
 */
import * as vscode from 'vscode';

export const FAKE_MODEL_EXTENSION_ID = 'context-keeper-test.fake-model';
export const FAKE_VENDOR = 'ck-fake';
export const FAKE_LARGE = 'ck-fake-large';
export const FAKE_SMALL = 'ck-fake-small';
export const NO_SCRIPT_LEFT = 'fake model: no script left';

export interface FakeToolCall {
  /** Defaults to `fake-call-<n>`. */
  callId?: string;
  name: string;
  input: object;
}

/** One answer of the fake model; each request takes the next step. */
export interface FakeStep {
  /** Streamed in `chunks` text parts (default 3). */
  text?: string;
  /** Reported after the text, in order. */
  toolCalls?: FakeToolCall[];
  /** The request fails with a LanguageModelError carrying this message. */
  error?: string;
  /** With `error`: the LanguageModelError factory to use. */
  errorCode?: 'NotFound' | 'NoPermissions' | 'Blocked';
  /** Streams the text, then waits for cancellation and throws a CancellationError. */
  waitForCancel?: boolean;
  chunks?: number;
  /** Only a request to this model id takes the step (default: any model). */
  model?: string;
}

export interface FakeRequestMessage {
  role: 'user' | 'assistant' | 'system' | string;
  name: string | undefined;
  /** Text parts as text, tool calls as `[call name id input]`, tool results as `[result id text]`. */
  parts: string[];
  /** The parts joined with newlines. */
  content: string;
}

export interface FakeRequest {
  model: string;
  messages: FakeRequestMessage[];
  /** Names of the tools the request offered. */
  tools: string[];
  toolMode: 'auto' | 'required';
  /** What provideTokenCount gives for these messages (about chars / 4). */
  tokenCount: number;
  /** What the fake has streamed so far: the text, then tool calls as `[call name id input]`. */
  answered: string;
  /**
   * `streaming` from the moment the request arrives (before any text is out: to
   * wait for a partial answer, wait for `answered`), then how it ended.
   */
  outcome: 'streaming' | 'done' | 'error' | 'cancelled';
}

export interface FakeModelApi {
  /** Appends steps to the script. */
  script(steps: FakeStep[]): void;
  /** Every request answered since the last reset, oldest first. */
  requests(): FakeRequest[];
  /** Empties the script and the record. */
  reset(): void;
  /** What `@fake invoke <tool> <json>` (a stand-in for another agent calling a tool) got back, oldest first. */
  toolResults(): { tool: string; text: string }[];
  /** The fake's own workspace storage folder (the sibling of every other extension's), if a folder is open. */
  readonly storagePath: string | undefined;
}

/** Activates the fake model extension and returns its API. */
export async function fakeModel(): Promise<FakeModelApi> {
  const extension = vscode.extensions.getExtension<FakeModelApi>(FAKE_MODEL_EXTENSION_ID);
  if (!extension) throw new Error(`${FAKE_MODEL_EXTENSION_ID} is not loaded: run through test/integration/runVsCode.mjs`);
  return extension.activate();
}
