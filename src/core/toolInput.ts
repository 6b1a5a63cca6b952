/**
 * Reading a logged tool call's input, whatever shape it has (real logs carry
 * strings, nulls, nested objects, JSON in strings, HTML entities of exported
 * transcripts), and rendering it deterministically. Every function is total:
 * it never throws.
 */
import type { ToolInvocation } from './types';

/** Window scanned at each end of an output for exit-code markers and paths. */
export const MARKER_WINDOW = 4096;

export function firstWord(s: string): string {
  const m = /^\s*(\S+)/.exec(s);
  return m?.[1] ?? '';
}

export function asRecord(v: unknown): Record<string, unknown> | undefined {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  if (typeof v === 'string') {
    const t = v.trim();
    if (t.length >= 2 && t.length < 200_000 && t.startsWith('{') && t.endsWith('}')) {
      try {
        const parsed: unknown = JSON.parse(t);
        if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
      } catch {
        /* not JSON */
      }
    }
  }
  return undefined;
}

/** An output longer than this is not looked into for a JSON envelope (a hostile 50 MB result is kept as it is). */
const ENVELOPE_MAX_CHARS = 8 * 1024 * 1024;

/**
 * The header Codex CLI's shell tools print above a command's output: `shell_command`'s "Exit code: 1", "Wall time:
 * 0.4 seconds" (and "Total output lines: N" when cut), `exec_command`'s "Chunk ID", "Wall time", "Process exited
 * with code 1" or "Process running with session ID 3" and "Original token count"; both end with "Output:".
 */
const CODEX_HEADER =
  /^(?:Exit code: (-?\d+)\n|Chunk ID: [^\n]*\n)?Wall time: [^\n]*\n(?:Process exited with code (-?\d+)\n|(Process running with session ID [^\n]*)\n)?(?:Original token count: \d+\n)?(?:Total output lines: \d+\n)?Output:\n/;

/**
 * A command's result as Codex CLI or Gemini CLI wrote it, read as any agent's: "Exit code: N" and the output.
 * Codex: without its header's timing and bookkeeping lines (CODEX_HEADER), or out of the JSON envelope of its older
 * `shell` tool, `{"output": "…", "metadata": {"exit_code": 1, "duration_seconds": 0.4}}`. Gemini CLI: out of its
 * fields (geminiFields). So the exit code, the error lines and what the command printed are found as in any agent's
 * output, and the model reads the output's lines rather than JSON escapes or empty fields. Any other output is
 * returned as it is.
 */
export function agentOutputText(output: string): string {
  if (output.startsWith('{')) return unwrapEnvelope(output);
  const header = CODEX_HEADER.exec(output);
  if (!header) return geminiFields(output);
  const code = header[1] ?? header[2];
  const lead = code !== undefined ? `Exit code: ${code}\n` : header[3] !== undefined ? `${header[3]}\n` : '';
  return `${lead}${output.slice(header[0].length)}`;
}

/** Gemini CLI's run_shell_command result: its command and directory, then "Output:" (older: "Stdout:") and the output. */
const GEMINI_HEAD = /^(?:Command: [^\n]*\nDirectory: [^\n]*\n)?(?:Output|Stdout): /;
/** The fields that close it, each on its own line: only those that apply, in this order (older versions: all). */
const GEMINI_FIELD = /^(Error|Exit Code|Signal|Background PIDs|Process Group PGID): (.*)$/;
/** The longest closing field looked for (an error message can be long; the output before it is not a field). */
const GEMINI_FIELD_MAX_CHARS = 4096;

/**
 * Gemini CLI's fields read as any agent's result (the result wrapped in `<untrusted_context>` as well): "Exit code:
 * N" when it states one, the output ("(empty)" is none), then its error and signal when it names them. A text that
 * does not end in its process-group or exit-code field is not Gemini's and is returned as it is.
 */
function geminiFields(output: string): string {
  const wrapped = /^<untrusted_context>\n([\s\S]*)\n<\/untrusted_context>\s*$/.exec(output);
  const text = wrapped ? wrapped[1]! : output;
  const head = GEMINI_HEAD.exec(text);
  if (!head) return output;
  // The fields are peeled off the end, a line at a time (a long output is not split into lines for it).
  const fields = new Map<string, string>();
  let end = text.length;
  for (;;) {
    // A field is one line of at most GEMINI_FIELD_MAX_CHARS: only that much before it is searched for its start.
    const from = Math.max(head[0].length, end - GEMINI_FIELD_MAX_CHARS);
    const at = text.slice(from, end).lastIndexOf('\n');
    const m = at < 0 ? null : GEMINI_FIELD.exec(text.slice(from + at + 1, end));
    if (!m) break;
    fields.set(m[1]!, m[2]!);
    end = from + at;
  }
  if (!fields.has('Process Group PGID') && !fields.has('Exit Code')) return output;
  const code = fields.get('Exit Code');
  const body = text.slice(head[0].length, end);
  const named = (field: string): string[] => {
    const value = fields.get(field);
    return value !== undefined && value !== '(none)' ? [`${field}: ${value}`] : [];
  };
  return [...(code !== undefined && /^-?\d+$/.test(code) ? [`Exit code: ${code}`] : []), ...(body === '(empty)' ? [] : [body]), ...named('Error'), ...named('Signal')].join('\n');
}

function unwrapEnvelope(output: string): string {
  if (output.length > ENVELOPE_MAX_CHARS) return output;
  if (!output.slice(0, 256).includes('"exit_code"') && !output.slice(-256).includes('"exit_code"')) return output;
  let parsed: unknown;
  try {
    parsed = JSON.parse(output);
  } catch {
    return output;
  }
  const rec = asRecord(parsed);
  const text = getField(rec, 'output');
  const code = getField(asRecord(getField(rec, 'metadata')), 'exit_code');
  if (!rec || typeof text !== 'string' || Object.keys(rec).some((k) => k !== 'output' && k !== 'metadata')) return output;
  return typeof code === 'number' && Number.isSafeInteger(code) ? `Exit code: ${code}\n${text}` : output;
}

export function getField(rec: Record<string, unknown> | undefined, key: string): unknown {
  if (!rec) return undefined;
  try {
    return rec[key];
  } catch {
    return undefined;
  }
}

export function stringField(rec: Record<string, unknown> | undefined, ...keys: string[]): string | undefined {
  for (const k of keys) {
    const v = getField(rec, k);
    if (typeof v === 'string' && v.trim() !== '') return v;
  }
  return undefined;
}

/** HTML entities of exported transcripts (SpecStory writes `&#96;`, `&gt;`) decoded. */
export function decodeEntities(s: string): string {
  if (s.indexOf('&') < 0) return s;
  return s
    .replace(/&#(\d+);/g, (_m, d: string) => {
      const code = Number(d);
      return code > 0 && code < 0x110000 ? String.fromCodePoint(code) : _m;
    })
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

// ---------------------------------------------------------------------------
// Rendering the input
// ---------------------------------------------------------------------------

/** JSON-safe copy with keys sorted at every level; cycles and absurd depth become markers. */
export function normalizeValue(v: unknown, ancestors: Set<object>, depth: number): unknown {
  if (v === null) return null;
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) ? v : String(v);
    case 'bigint':
      return v.toString();
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      break;
  }
  const obj = v as object;
  if (ancestors.has(obj)) return '[Circular]';
  if (depth > 64) return '[MaxDepth]';
  ancestors.add(obj);
  try {
    if (Array.isArray(obj)) {
      const out: unknown[] = [];
      for (let i = 0; i < obj.length; i++) {
        let item: unknown;
        try {
          item = normalizeValue((obj as unknown[])[i], ancestors, depth + 1);
        } catch {
          item = null;
        }
        out.push(item === undefined ? null : item);
      }
      return out;
    }
    if (obj instanceof Date) return Number.isNaN(obj.getTime()) ? null : obj.toISOString();
    const rec = obj as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(rec).sort()) {
      let item: unknown;
      try {
        item = normalizeValue(rec[k], ancestors, depth + 1);
      } catch {
        item = '[Unreadable]';
      }
      if (item !== undefined) out[k] = item;
    }
    return out;
  } finally {
    ancestors.delete(obj);
  }
}

export function renderValue(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  const norm = normalizeValue(v, new Set(), 0);
  if (norm === undefined) return '';
  return JSON.stringify(norm) ?? '';
}

/**
 * Deterministic text of the call arguments: a string input as is; an object as
 * compact JSON with keys sorted at every level (so equal inputs render equally
 * whatever the key order in the log); null/undefined as ''.
 */
export function renderToolInput(inv: ToolInvocation): string {
  try {
    return renderValue(inv?.input);
  } catch {
    try {
      return String(inv?.input ?? '');
    } catch {
      return '';
    }
  }
}
