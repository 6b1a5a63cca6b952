/** How a change or a command is put to the user: the allow list, the question in markdown, the answer, the words for a refusal. */
import type { ConfirmRequest, ToolContext } from './contract';
import { abortError, throwIfAborted } from './errors';
import { DIFF_MAX_LINES, GREP_LINE_CHARS } from './limits';
import { clipOneLine, plural } from './text';

/**
 * Whether a command line may run without asking: it starts with one of the
 * user's allowed prefixes (`npm test`, `git status`) as whole words, and is one
 * simple command — no `;`, `&`, `|`, redirection, substitution or newline that
 * could chain something else after the allowed part.
 */
export function allowListed(command: string, prefixes: readonly string[]): boolean {
  const line = command.trim();
  if (line === '' || /[;&|<>`\n\r]|\$\(/.test(line)) return false;
  return prefixes.some((prefix) => {
    const p = prefix.trim();
    return p !== '' && (line === p || line.startsWith(`${p} `));
  });
}

/** What the model is told when the user declines a change or a command (nothing was written or run). */
export function declinedMessage(request: Pick<ConfirmRequest, 'kind' | 'path' | 'command'>): string {
  if (request.kind === 'run') return `The user declined to run \`${clipOneLine(request.command ?? '', 120)}\`.`;
  return `The user declined the ${request.kind} to ${request.path ?? 'the file'}.`;
}

/**
 * The change or command as the user is asked to approve it, in markdown: the
 * changed lines of an edit or an overwrite as a diff, the start of a new
 * file, a command in a shell block with its folder.
 */
export function confirmationMarkdown(request: ConfirmRequest): string {
  if (request.kind === 'run') return `\`\`\`sh\n${request.command ?? ''}\n\`\`\`\nin \`${request.cwd ?? '.'}\` of the workspace folder`;
  const fence = (body: string, lang: string): string => `\`\`\`${lang}\n${body.replace(/\`\`\`/g, '`\u200b``')}\n\`\`\``;
  if (request.before === undefined) {
    const lines = (request.after ?? '').split('\n');
    const shown = lines.slice(0, DIFF_MAX_LINES).join('\n');
    return `New file \`${request.path}\` (${plural(lines.length, 'line')}):\n${fence(lines.length > DIFF_MAX_LINES ? `${shown}\n… ${lines.length - DIFF_MAX_LINES} more lines` : shown, '')}`;
  }
  const diff = diffSummary(request.before, request.after ?? '');
  return `\`${request.path}\`: -${plural(diff.removed, 'line')} +${plural(diff.added, 'line')}\n${fence(`${diff.header}\n${diff.body}`, 'diff')}`;
}

/** The user's answer; cancelling the turn while the question is open rejects with an AbortError at once. */
export async function askUser(ctx: ToolContext, request: ConfirmRequest): Promise<boolean> {
  throwIfAborted(ctx.signal);
  let onAbort = (): void => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortError());
    ctx.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return (await Promise.race([ctx.confirm(request), aborted])) === true;
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * A one-hunk unified-style summary: the first to the last changed line, with
 * at most DIFF_MAX_LINES removed and added lines shown.
 */
export function diffSummary(before: string, after: string): { header: string; body: string; removed: number; added: number } {
  const a = before.split('\n');
  const b = after.split('\n');
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  const removed = a.slice(prefix, a.length - suffix);
  const added = b.slice(prefix, b.length - suffix);
  const side = (lines: string[], sign: string): string[] => {
    const shown = lines.slice(0, DIFF_MAX_LINES).map((line) => `${sign}${clipOneLine(line.replace(/\r$/, ''), GREP_LINE_CHARS)}`);
    if (lines.length > DIFF_MAX_LINES) shown.push(`${sign}… ${lines.length - DIFF_MAX_LINES} more lines`);
    return shown;
  };
  const header = `@@ -${prefix + 1},${removed.length} +${prefix + 1},${added.length} @@`;
  return { header, body: [...side(removed, '-'), ...side(added, '+')].join('\n'), removed: removed.length, added: added.length };
}
