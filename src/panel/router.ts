/**
 * Routes the Task Context panel's messages to what they ask for. Every inbound
 * message is parsed first (webview input is untrusted): one that does not
 * parse goes to `reject` and nothing else happens. No `vscode` here: the
 * provider implements the ports with the agent and the editor; tests with fakes.
 */
import type { Fact } from '../core/state';
import type { StateEvent } from '../core/store';
import { parseWebviewMessage, type HostMessage, type PagedList, type WebviewMessage } from '../protocol/messages';
import { messageOf } from '../core/errors';

/** What the router may do; the provider implements each with the agent and VS Code. */
export interface PanelPorts {
  /**
   * The task the panel shows (undefined: none): the one whose state was last
   * posted to the webview, not one merely scheduled. A message naming another
   * task was sent from a view that is out of date and changes nothing.
   */
  taskId(): string | undefined;
  /** A user's act on a protected fact of the task (kept in its store, applied now). */
  applyStateEvent(taskId: string, event: Omit<StateEvent, 'record'>): Promise<Fact>;
  /** Opens raw record `index` of the task, read-only. */
  openRecord(taskId: string, index: number): Promise<void>;
  /** Opens a tool call's full input and output, read-only. */
  openToolCall(taskId: string, toolCallId: string): Promise<void>;
  /** Opens a workspace file; refuses (and says so) a path outside the workspace folder. */
  openFile(path: string): Promise<void>;
  /** Derives the task again from its raw record; resolves to a one-line outcome for the user. */
  rebuild(taskId: string): Promise<string>;
  /** Sends the next page of a long list of the task (the view shows more of it from now on). */
  showMore(taskId: string, list: PagedList): void;
  /** The panel's filter: the long lists are paged by what matches it. */
  setFilter(text: string): void;
  /** A message that did not parse: logged by the provider, never answered. */
  reject(error: string): void;
}

type ActionMessage = Extract<WebviewMessage, { factId: string }>;
type ActionType = ActionMessage['type'];

/** Which user act each fact or pending action is. */
export const ACTION_KINDS: Readonly<Record<ActionType, StateEvent['kind']>> = {
  'fact/correct': 'correct',
  'fact/pin': 'pin',
  'fact/supersede': 'supersede',
  'fact/delete': 'delete',
  'pending/confirm': 'confirm',
  'pending/reject': 'reject',
};

/** What the panel says once an act succeeded. */
const DONE: Readonly<Record<StateEvent['kind'], (fact: Fact) => string>> = {
  correct: (f) => `Corrected: the context now carries version ${f.version}.`,
  pin: () => 'Pinned: the fact stays in the protected state.',
  supersede: () => 'Marked as no longer holding: it leaves the context and stays in the history.',
  delete: () => 'Deleted: it leaves the context and stays in the history.',
  confirm: () => 'Confirmed: the rule is now in force.',
  reject: () => 'Rejected: the candidate will not become a rule.',
  close: () => 'Closed.',
};

export const NO_TASK = 'no task';

/** Why an action from a view that showed another task changed nothing. */
export function staleTaskMessage(messageTaskId: string): string {
  return `The panel was showing task ${messageTaskId}; nothing was changed. Try again.`;
}

/**
 * Handles one message from the panel. Returns the reply to post (an
 * `action/result` for a request that carries a requestId), or undefined. A
 * `ready` returns nothing: the provider answers it with `state/full`.
 *
 * Every message that acts on a task names the task the webview rendered; it
 * acts on that task only when it is still the one shown (the host may have
 * moved to another task, following the chat, before the webview redrew). When
 * it is not, nothing is done: an action is answered ok:false, an open is dropped.
 */
export async function handleWebviewMessage(raw: unknown, ports: PanelPorts): Promise<HostMessage | undefined> {
  const parsed = parseWebviewMessage(raw);
  if (!parsed.ok) {
    ports.reject(parsed.error);
    return undefined;
  }
  const message = parsed.message;
  switch (message.type) {
    case 'ready':
      return undefined;
    case 'fact/correct':
    case 'fact/pin':
    case 'fact/supersede':
    case 'fact/delete':
    case 'pending/confirm':
    case 'pending/reject': {
      const kind = ACTION_KINDS[message.type];
      const event: Omit<StateEvent, 'record'> = message.type === 'fact/correct' ? { kind, factId: message.factId, value: message.value } : { kind, factId: message.factId };
      return act(message, ports, async (taskId) => DONE[kind](await ports.applyStateEvent(taskId, event)));
    }
    case 'rebuild':
      return act(message, ports, (taskId) => ports.rebuild(taskId));
    case 'open/record':
      if (message.taskId === ports.taskId()) await ports.openRecord(message.taskId, message.record);
      return undefined;
    case 'open/toolCall':
      if (message.taskId === ports.taskId()) await ports.openToolCall(message.taskId, message.toolCallId);
      return undefined;
    case 'open/file':
      await ports.openFile(message.path);
      return undefined;
    case 'list/more':
      if (message.taskId === ports.taskId()) ports.showMore(message.taskId, message.list);
      return undefined;
    case 'view/filter':
      ports.setFilter(message.text);
      return undefined;
  }
}

/** Runs an action on the task the message names, if it is the shown one; its outcome, or its error, is the `action/result`. */
async function act(message: { readonly requestId: string; readonly taskId: string }, ports: PanelPorts, run: (taskId: string) => Promise<string>): Promise<HostMessage> {
  const { requestId, taskId } = message;
  const shown = ports.taskId();
  if (shown === undefined) return { type: 'action/result', requestId, ok: false, message: NO_TASK };
  if (taskId !== shown) return { type: 'action/result', requestId, ok: false, message: staleTaskMessage(taskId) };
  try {
    return { type: 'action/result', requestId, ok: true, message: await run(taskId) };
  } catch (error) {
    return { type: 'action/result', requestId, ok: false, message: messageOf(error) };
  }
}
