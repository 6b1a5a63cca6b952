/** The item renderers of the Task Context lines, the evidence not loaded, the artifact index and the compaction timeline. */
import type { ArtifactView, CompactionView, NotLoadedView, SectionView, SummaryLineView } from '../../src/protocol/messages';
import { artifactSearchText, notLoadedSearchText } from '../../src/protocol/view';
import { h, icon, nodes, s, type ItemRenderer } from '../dom';
import { CONFIDENCE_LABEL, formatRanges, formatTokens, HOW_LABEL, KIND_LABEL, PRIORITY_LABEL, signedChange, TIER_LABEL } from '../format';
import { actionButton, sourceButtons, tag } from './common';

/** A line of a Task Context section: its text, topic key, priority, confidence and sources. */
export function summaryLineRenderer(section: SectionView['name']): ItemRenderer<SummaryLineView> {
  return {
    key: (line) => line.key,
    signature: (line) => JSON.stringify(line),
    searchText: (line) => `${line.key} ${line.text} ${section}`.toLowerCase(),
    fill(el, line) {
      const priority = PRIORITY_LABEL[line.priority] ?? { short: `P${line.priority}`, long: `Priority ${line.priority}` };
      const confidence = CONFIDENCE_LABEL[line.confidence];
      el.className = `line priority-${line.priority}`;
      el.replaceChildren(...nodes(
        h('p', { class: 'line-text' }, line.text || h('span', { class: 'muted' }, '(key and sources only)')),
        h(
          'div',
          { class: 'meta' },
          h('code', { class: 'line-key', title: 'Topic key' }, line.key),
          tag(priority.short, `priority priority-${line.priority}`, priority.long),
          tag(confidence.short, `confidence confidence-${line.confidence}`, confidence.long),
          sourceButtons(line.sources, `line:${section}:${line.key}`),
        ),
      ));
    },
  };
}

/** A part the model does not see in full: how, its size, and a way back. */
export const notLoadedRenderer: ItemRenderer<NotLoadedView> = {
  key: (part) => part.address,
  signature: (part) => JSON.stringify(part),
  searchText: notLoadedSearchText,
  fill(el, part) {
    const how = HOW_LABEL[part.how];
    el.className = `part how-${part.how}`;
    el.replaceChildren(...nodes(
      h(
        'div',
        { class: 'part-row' },
        h('span', { class: `part-icon how-${part.how}`, title: `${how.label}: ${how.long}` }, icon(how.icon)),
        // What the part is, for a person: the tool and its command or file (the address stays in the tooltip).
        part.tool
          ? h('span', { class: 'part-what', title: `${part.tool}${part.subject ? ` ${part.subject}` : ''} — ${part.address}` }, h('span', { class: 'part-tool' }, part.tool))
          : h('code', { class: 'part-address', title: part.address }, part.address),
        h('span', { class: 'part-tokens' }, formatTokens(part.tokens), h('span', { class: 'unit' }, ' tok')),
        part.toolCallId
          ? actionButton({ action: 'open-tool', label: 'View', icon: 'eye', kind: 'secondary', focus: `part:${part.address}:view`, data: { 'tool-call': part.toolCallId }, ariaLabel: `View tool call ${part.toolCallId}`, title: 'Open the full input and output of this tool call' })
          : null,
      ),
      // The command or file on a line of its own: whole, wrapped at sidebar width.
      part.subject ? h('code', { class: 'part-subject' }, part.subject) : null,
      h(
        'div',
        { class: 'part-detail' },
        tag(how.label, `how how-${part.how}`, how.long),
        h('span', { class: 'muted' }, KIND_LABEL[part.kind]),
        part.record !== undefined ? h('span', { class: 'muted part-age', title: `Record r${part.record}; the task has had ${part.age ?? 0} records since` }, `r${part.record} · ${ageText(part.age ?? 0)}`) : null,
        part.toolCallId ? null : h('span', { class: 'recover' }, h('span', { class: 'muted' }, 'recover: '), h('code', null, part.recover)),
      ),
    ));
  },
};

/** How long ago a part was, in records of the task (the record is the task's clock). */
function ageText(records: number): string {
  return records === 0 ? 'the last record' : `${records.toLocaleString('en-US')} ${records === 1 ? 'record' : 'records'} ago`;
}

function splitPath(path: string): { name: string; dir: string } {
  const at = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return at < 0 ? { name: path, dir: '' } : { name: path.slice(at + 1), dir: path.slice(0, at) };
}

/** A file the task touched: open it; how often it was read, modified, created; in which steps. */
export const artifactRenderer: ItemRenderer<ArtifactView> = {
  key: (file) => file.path,
  signature: (file) => JSON.stringify(file),
  searchText: artifactSearchText,
  fill(el, file) {
    const { name, dir } = splitPath(file.path);
    el.className = 'artifact';
    const counts = [
      file.creations > 0 ? tag(`created ${file.creations}`, 'count-created', `Created ${file.creations}×`) : null,
      file.modifications > 0 ? tag(`modified ${file.modifications}`, 'count-modified', `Modified ${file.modifications}×`) : null,
      file.reads > 0 ? tag(`read ${file.reads}`, 'count-read', `Read ${file.reads}×`) : null,
    ];
    el.replaceChildren(...nodes(
      h(
        'div',
        { class: 'artifact-row' },
        h(
          'button',
          { type: 'button', class: 'path', 'data-action': 'open-file', 'data-path': file.path, 'data-focus': `file:${file.path}`, title: `Open ${file.path}`, 'aria-label': `Open ${file.path}` },
          icon(file.creations > 0 ? 'new-file' : 'file'),
          h('span', { class: 'path-name' }, name),
          dir ? h('span', { class: 'path-dir' }, dir) : null,
        ),
        h('span', { class: 'artifact-counts' }, counts),
      ),
      file.steps.length > 0 ? h('div', { class: 'artifact-steps muted' }, `${file.steps.length === 1 ? 'step' : 'steps'} ${formatRanges(file.steps)}`) : null,
    ));
  },
};

/** Keys compactions by record; two at the same record (a reactive one after the planned one) stay apart. */
export function compactionKeys(compactions: readonly CompactionView[]): { key: string; compaction: CompactionView }[] {
  const seen = new Map<number, number>();
  return compactions.map((compaction) => {
    const n = (seen.get(compaction.atRecord) ?? 0) + 1;
    seen.set(compaction.atRecord, n);
    return { key: `${compaction.atRecord}:${n}`, compaction };
  });
}

const TIER_GLYPH = ['', '①', '②', '③', '④'];

/** One compaction: where, which tier, tokens before → after (with a bar), reactive, the loss ledger. */
export const compactionRenderer: ItemRenderer<{ key: string; compaction: CompactionView }> = {
  key: (entry) => entry.key,
  signature: (entry) => JSON.stringify(entry.compaction),
  fill(el, { compaction: c }) {
    el.className = `compaction tier-${c.tier}${c.reactive ? ' is-reactive' : ''}`;
    const ratio = c.before > 0 ? Math.max(0, Math.min(1, c.after / c.before)) : 1;
    el.replaceChildren(...nodes(
      h(
        'div',
        { class: 'compaction-row' },
        h('span', { class: 'compaction-at' }, `r${c.atRecord}`),
        tag(`${TIER_GLYPH[c.tier] ?? c.tier} ${TIER_LABEL[c.tier] ?? `tier ${c.tier}`}`, `tier tier-${c.tier}`, `Tier ${c.tier}`),
        c.reactive ? tag('reactive', 'reactive', 'Run after the provider rejected the context as too long') : null,
      ),
      h(
        'div',
        { class: 'compaction-numbers' },
        s(
          'svg',
          { class: 'compaction-bar', viewBox: '0 0 100 6', preserveAspectRatio: 'none', 'aria-hidden': 'true', focusable: 'false' },
          s('rect', { class: 'bar-before', x: 0, y: 0, width: 100, height: 6, rx: 1 }),
          s('rect', { class: 'bar-after', x: 0, y: 0, width: (ratio * 100).toFixed(2), height: 6, rx: 1 }),
        ),
        h('span', { class: 'compaction-tokens' }, `${formatTokens(c.before)} → ${formatTokens(c.after)}`, h('span', { class: 'muted' }, ` tokens (${signedChange(c.after - c.before, c.before)})`)),
      ),
      c.ledger
        ? h(
            'div',
            { class: 'ledger muted', title: 'The loss ledger at this boundary' },
            `retained ${c.ledger.retained} · superseded ${c.ledger.superseded} · omitted ${c.ledger.omitted} · unsupported ${c.ledger.unsupported}`,
          )
        : null,
    ));
  },
};
