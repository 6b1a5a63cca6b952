/**
 * What the panel's host and its webview agree on about the long lists (paging
 * and the filter), with no dependency: the webview bundle imports it as it is.
 *
 * The long lists the host sends a page of (a task of 50k records folds
 * thousands of tool calls): the panel shows the first `limit` entries that
 * match its filter and asks for more.
 */
export const PAGED_LISTS = ['notLoaded', 'artifacts', 'compactions'] as const;
export type PagedList = (typeof PAGED_LISTS)[number];
/** Entries the host sends of each paged list at first, and adds on each "show more". */
export const PAGE_SIZE = 100;
/** The longest filter the panel sends the host. */
export const FILTER_MAX_CHARS = 200;

interface Page {
  readonly total: number;
  readonly matching: number;
  readonly tokens: number;
}

export function emptyPages(): Record<PagedList, Page> {
  const none = { total: 0, matching: 0, tokens: 0 };
  return { notLoaded: none, artifacts: none, compactions: none };
}

/** The text the panel's filter matches in an entry of evidence not loaded (the host pages by it, the webview filters by it). */
export function notLoadedSearchText(part: { readonly address: string; readonly kind: string; readonly how: string; readonly toolCallId?: string | undefined; readonly tool?: string | undefined; readonly subject?: string | undefined; readonly recover: string }): string {
  return `${part.tool ?? ''} ${part.subject ?? ''} ${part.address} ${part.kind} ${part.how} ${part.toolCallId ?? ''} ${part.recover}`.toLowerCase();
}

/** The text the panel's filter matches in a file of the artifact index. */
export function artifactSearchText(file: { readonly path: string }): string {
  return file.path.toLowerCase();
}

/** The filter as the panel applies it: trimmed, lower-case, clipped. */
export function normalizeFilter(text: string): string {
  return text.trim().toLowerCase().slice(0, FILTER_MAX_CHARS);
}
