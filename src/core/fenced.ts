/**
 * A fenced block that no backtick run inside the text can close: the text
 * inside stays word for word, and nothing in it (a `## Constraints` heading, a
 * `# comment` line) can pass for the structure around it.
 */
export function fenced(text: string, language = ''): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${text}\n${fence}`;
}
