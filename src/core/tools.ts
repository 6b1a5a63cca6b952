/**
 * Tool knowledge, in one import: what a tool call is (family: toolKinds.ts),
 * its input read and rendered (toolInput.ts), which files it touched
 * (toolFiles.ts), its shell command and exit code (toolCommands.ts), and its
 * deterministic reduced form (the R3 "tool compact" lever, computed without an
 * LLM: toolReduce.ts).
 *
 * Pure TypeScript: no `vscode`, no `node:*`. Every exported function is total:
 * it never throws, whatever shape the logged input/output has (real logs carry
 * strings, nulls, nested objects, markdown renderings of calls, …).
 */
import { shellCommand } from './toolCommands';
import { fileTouches } from './toolFiles';
import { asRecord, stringField } from './toolInput';
import { classifyTool } from './toolKinds';
import type { ToolInvocation } from './types';

export { commandStatus, exitCode, onlyLooks, onlyTidies, shellCommand, TEST_COMMAND, TIDYING_PROGRAMS } from './toolCommands';
export { aiderAppliedEdits, aiderHeldBack, heldBackEdit, fileTouches, samePathKey, shellMoves, shellRemovals, shellRestores, shellTouches, madeInStep, writtenPaths, type FileTouch } from './toolFiles';
export { decodeEntities, renderToolInput } from './toolInput';
export { classifyTool, type ToolFamily, type ToolKind } from './toolKinds';
export {
  EDIT_INPUT_FIELD_MIN_CHARS,
  FILE_HEAD_LINES,
  FILE_TAIL_LINES,
  INPUT_FIELD_MAX_CHARS,
  MAX_LINE_CHARS,
  PRECOMPACT_MIN_CHARS,
  SEARCH_KEEP_LINES,
  SHELL_HEAD_LINES,
  SHELL_TAIL_LINES,
  TODO_KEEP_LINES,
  WEB_KEEP_LINES,
  isBinary,
  outputAsSent,
  reduceTool,
  type ReducedTool,
} from './toolReduce';

/**
 * What a call is about, for a person scanning a list of calls: the command it ran, else what a search looked for
 * (and where), else the first file it touched.
 */
export function toolSubject(inv: ToolInvocation): string | undefined {
  const command = shellCommand(inv);
  if (command !== undefined) return command.split('\n')[0]!;
  const path = fileTouches(inv)[0]?.path;
  const input = asRecord(inv.input);
  const sought = classifyTool(inv.name, inv.input).family === 'search' ? stringField(input, 'pattern', 'query', 'regex', 'search_term', 'glob') : undefined;
  if (sought === undefined) return path;
  const where = path ?? stringField(input, 'path', 'dir', 'directory');
  return `"${sought.split('\n')[0]!}"${where !== undefined ? ` in ${where}` : ''}`;
}
