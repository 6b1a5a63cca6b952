/**
 * How a tool is declared: its input schema built on first use, the JSON
 * Schema the model reads, every input validated with one sentence per problem,
 * and its result clipped to the output cap.
 */
import * as z from '../../core/schema';
import type { AgentTool, ToolContext, ToolOutcome } from './contract';
import { abortError, describeError, isAbortError, throwIfAborted } from './errors';
import { clipMiddle, clipOneLine, maxOutputChars } from './text';

interface ToolSpec<S extends z.ZodMiniType> {
  readonly name: string;
  readonly description: string;
  /** Builds the input schema: called once, when the tool is first offered or run (not while the extension activates). */
  readonly schema: () => S;
  readonly run: (input: z.output<S>, ctx: ToolContext) => Promise<ToolOutcome>;
}

export function defineTool<S extends z.ZodMiniType>(spec: ToolSpec<S>): AgentTool {
  let schema: S | undefined;
  let json: Record<string, unknown> | undefined;
  const built = (): S => (schema ??= spec.schema());
  const inputSchema = (): Record<string, unknown> => (json ??= modelSchema(built()));
  return {
    name: spec.name,
    description: spec.description,
    get inputSchema(): Record<string, unknown> {
      return inputSchema();
    },
    run: async (input, ctx) => {
      throwIfAborted(ctx.signal);
      const parsed = built().safeParse(input);
      if (!parsed.success) {
        const problems = parsed.error.issues.map((issue) => `- ${describeIssue(issue, input, inputSchema())}`);
        return { isError: true, output: `Invalid input for ${spec.name}:\n${problems.join('\n')}` };
      }
      let outcome: ToolOutcome;
      try {
        outcome = await spec.run(parsed.data, ctx);
      } catch (error) {
        if (ctx.signal.aborted) throw isAbortError(error) ? error : abortError();
        return { isError: true, output: describeError(spec.name, error) };
      }
      if (ctx.signal.aborted) throw abortError(outcome);
      const max = maxOutputChars(ctx);
      return outcome.output.length <= max ? outcome : { ...outcome, output: clipMiddle(outcome.output, max, 'result') };
    },
  };
}

/** The JSON Schema the model reads, derived from the zod schema (no `$schema`, no safe-integer noise, `required` always present). */
function modelSchema(schema: z.ZodMiniType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  if (!Array.isArray(json.required)) json.required = [];
  const strip = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(strip);
    if (node === null || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    if (record.maximum === Number.MAX_SAFE_INTEGER) delete record.maximum;
    if (record.minimum === Number.MIN_SAFE_INTEGER) delete record.minimum;
    Object.values(record).forEach(strip);
  };
  strip(json);
  return json;
}

type Issue = z.core.$ZodIssue;

/** One sentence per problem, naming the field (`todos[1].status`). */
function describeIssue(issue: Issue, input: unknown, schema: Record<string, unknown>): string {
  const issuePath = issue.path as readonly PropertyKey[];
  const field = fieldName(issuePath);
  const value = valueAt(input, issuePath);
  switch (issue.code) {
    case 'invalid_type': {
      if (issuePath.length === 0) return `The input must be a JSON object, but got ${typeName(input)}.`;
      if (value === undefined) return `Missing required field "${field}" (${typeNoun(issue.expected)}).`;
      return `Field "${field}" must be ${typeNoun(issue.expected)}, but got ${typeName(value)}.`;
    }
    case 'unrecognized_keys': {
      const keys = issue.keys.map((key) => `"${fieldName([...issuePath, key])}"`).join(', ');
      const allowed = Object.keys(propertiesAt(schema, issuePath));
      const known = allowed.length > 0 ? ` (known fields: ${allowed.join(', ')})` : '';
      return `Unknown field${issue.keys.length === 1 ? '' : 's'} ${keys}${known}.`;
    }
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string') {
        return min <= 1 ? `Field "${field}" must not be empty.` : `Field "${field}" must have at least ${min} characters.`;
      }
      if (issue.origin === 'array') return `Field "${field}" must have at least ${min} item${min === 1 ? '' : 's'}.`;
      return `Field "${field}" must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${min}, but got ${show(value)}.`;
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string') return `Field "${field}" must have at most ${max} characters.`;
      if (issue.origin === 'array') return `Field "${field}" must have at most ${max} item${max === 1 ? '' : 's'}.`;
      return `Field "${field}" must be ${issue.inclusive === false ? 'less than' : 'at most'} ${max}, but got ${show(value)}.`;
    }
    case 'invalid_value':
      return `Field "${field}" must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, but got ${show(value)}.`;
    case 'custom':
      return issue.message;
    default:
      return `Field "${field || '(input)'}": ${issue.message}.`;
  }
}

function fieldName(keys: readonly PropertyKey[]): string {
  let out = '';
  for (const key of keys) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

function valueAt(input: unknown, keys: readonly PropertyKey[]): unknown {
  let node: unknown = input;
  for (const key of keys) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

function propertiesAt(schema: Record<string, unknown>, keys: readonly PropertyKey[]): Record<string, unknown> {
  let node: unknown = schema;
  for (const key of keys) {
    const record = node as Record<string, unknown> | undefined;
    node = typeof key === 'number' ? record?.items : (record?.properties as Record<string, unknown> | undefined)?.[String(key)];
  }
  const properties = (node as Record<string, unknown> | undefined)?.properties;
  return properties !== null && typeof properties === 'object' ? (properties as Record<string, unknown>) : {};
}

function typeNoun(expected: string): string {
  switch (expected) {
    case 'int':
      return 'a whole number';
    case 'array':
    case 'object':
    case 'integer':
      return `an ${expected}`;
    default:
      return `a ${expected}`;
  }
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return `the number ${value}`;
  if (typeof value === 'string') return `the string ${clipOneLine(JSON.stringify(value), 60)}`;
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  try {
    return clipOneLine(JSON.stringify(value) ?? String(value), 60);
  } catch {
    return String(value);
  }
}
