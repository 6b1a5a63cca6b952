/** view_tool_call: the full input and output of an earlier tool call of the session. */
import * as z from '../../core/schema';
import { defineTool } from './defineTool';
import { ToolError } from './errors';
import { DEFAULT_MAX_OUTPUT_CHARS } from './limits';
import { clipMiddle, maxOutputChars } from './text';

export const viewToolCallTool = defineTool({
  name: 'view_tool_call',
  description:
    'Show the full input and output of an earlier tool call of this session, by its id: the way back to anything the context shows shortened or folded (the pointer view_tool_call("<id>")). ' +
    'Long texts are clipped to the result limit (100,000 characters by default), keeping their beginning and end.',
  schema: () =>
    z.strictObject({
      toolCallId: z.described(z.string().check(z.minLength(1)), 'The id of the earlier tool call, as given in view_tool_call("<id>").'),
    }),
  run: async (input, ctx) => {
    const call = ctx.viewToolCall(input.toolCallId);
    if (call === undefined) throw new ToolError(`No tool call with id ${JSON.stringify(input.toolCallId)} in this session`);
    return { isError: false, output: formatToolCallView(input.toolCallId, call, maxOutputChars(ctx)) };
  },
});

/** A recorded tool call in full (clipped to `max` characters, keeping its beginning and end): what view_tool_call returns. */
export function formatToolCallView(id: string, call: { name: string; input: string; output: string | undefined; isError: boolean }, max = DEFAULT_MAX_OUTPUT_CHARS): string {
  const text = `Tool call ${id}: ${call.name}${call.isError ? ' (failed)' : ''}\n` + `Input:\n${call.input}\n` + `Output:\n${call.output ?? '(no output recorded)'}`;
  if (text.length <= max) return text;
  return `${clipMiddle(text, max - 100, 'tool call')}\n[clipped: the full text has ${text.length} characters]`;
}
