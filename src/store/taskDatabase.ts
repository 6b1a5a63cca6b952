/**
 * The store's tables in memory: each journal entry applied to them
 * (idempotently, so replaying the journal at open lands the same rows), and the
 * sessions, records and artifact rows read back from them, each record row
 * verified against its checksum and each large output against its content hash.
 * It never writes a file: the session store journals first, then applies here.
 */
import { ArtifactIndex, observeArtifacts, type ArtifactEntry } from '../core/artifacts';
import { SessionRecord } from '../core/parts';
import type { Redactor } from '../core/redact';
import type { ReducedForm, SnapshotEntry } from '../core/store';
import type { RawRecord } from '../core/types';
import type { Journal, JournalEntry } from './journal';
import { PayloadMissingError, type PayloadStore, payloadHash as contentHashOf } from './payloads';
import type { SessionSummary } from './sessionStore';
import { queryAll, type SqlDatabase, type SqlValue } from './sqljs';
import { lostKey, rowOf, rowSum, type RecordData } from './tables';

export class TaskDatabase {
  /** Records lost from the journal (a damaged line), filled with a marker so the records after them stay addressable. */
  /** Records found missing while the journal was applied (said at open if they are still lost then). */
  readonly gaps: { readonly task: string; readonly indices: readonly number[] }[] = [];
  /** Rows whose checksum failed on read, reported once each. */
  private readonly reportedRows = new Set<string>();
  /** Each task's records and artifact index rebuilt in memory: an append updates only the artifact rows its record touched. */
  private readonly artifactCache = new Map<string, ArtifactIndex>();
  private readonly sessionRecords = new Map<string, SessionRecord>();

  constructor(
    private readonly db: SqlDatabase,
    /** Holds the journal's copy of a record whose row changed on disk. */
    private readonly journal: Journal | undefined,
    private readonly payloads: PayloadStore,
    /** Tells the user of a problem found on read (a row or an output changed on disk, an output missing). */
    private readonly notice: (message: string) => void,
    /** Hides a secret in a path before the artifact index keeps it. */
    private readonly redactor: Redactor,
  ) {}

  // ----------------------------------------------------------------- reading

  sessions(): SessionSummary[] {
    return queryAll(
      this.db,
      `SELECT t.task_id AS id, t.title AS title, (SELECT COUNT(*) FROM task_message m WHERE m.task_id = t.task_id) AS records FROM task t ORDER BY t.task_id`,
    ).map((r) => ({ id: String(r.id), title: String(r.title ?? ''), records: Number(r.records) }));
  }

  /** Records of a session: they are contiguous from 0 (appends are in order, a lost one is a marker), so the last index + 1, found on the primary key rather than by counting rows. */
  recordCount(taskId: string): number {
    return Number(queryAll(this.db, 'SELECT COALESCE(MAX(idx) + 1, 0) AS n FROM task_message WHERE task_id = ?', [taskId])[0]?.n ?? 0);
  }

  /**
   * A large tool output, checked against the content hash it is stored under
   * (the journal holds only the hash, so there is no second copy): an output
   * changed on disk is served as found behind a warning line, a missing one as
   * a marker, and either is reported once.
   */
  private payloadText(taskId: string, index: number, hash: string): string {
    let text: string;
    try {
      text = this.payloads.get(hash);
    } catch (error) {
      if (!(error instanceof PayloadMissingError)) throw error;
      this.payloadProblem(hash, `The stored output of record ${index} of session ${taskId} is missing (${error.path}); a marker stands in its place.`);
      return `[tool output lost: its stored copy ${hash} is missing from ${this.payloads.dir}]`;
    }
    if (contentHashOf(text) === hash) return text;
    this.payloadProblem(hash, `The stored output of record ${index} of session ${taskId} was changed on disk (it no longer matches its content hash ${hash}); it is shown as found, behind a warning.`);
    return `[warning: this output was changed on disk after it was recorded (content hash ${hash} no longer matches); shown as found]\n${text}`;
  }

  private readonly payloadProblems = new Set<string>();
  private payloadProblem(hash: string, message: string): void {
    if (this.payloadProblems.has(hash)) return;
    this.payloadProblems.add(hash);
    this.notice(message);
  }

  /** The raw record of a session; large outputs are read from the payload folder only when `loadPayloads`. */
  records(taskId: string, options: { loadPayloads?: boolean } = {}): RawRecord[] {
    return queryAll(this.db, 'SELECT * FROM task_message WHERE task_id = ? ORDER BY idx', [taskId]).map((stored) => {
      const row = this.verifiedRow(taskId, stored);
      const extra = row.extra ? (JSON.parse(String(row.extra)) as Record<string, unknown>) : {};
      let toolOutput = row.tool_output === null ? undefined : String(row.tool_output);
      if (row.payload_hash !== null) {
        toolOutput = options.loadPayloads ? this.payloadText(taskId, Number(row.idx), String(row.payload_hash)) : `[payload ${String(row.payload_hash)}, ${String(row.payload_bytes)} bytes]`;
      }
      const r: Record<string, unknown> = { index: Number(row.idx), role: String(row.role), content: String(row.content) };
      if (row.tool_name !== null) r.toolName = String(row.tool_name);
      if (row.tool_call_id !== null) r.toolCallId = String(row.tool_call_id);
      if (row.tool_input !== null) r.toolInput = JSON.parse(String(row.tool_input));
      if (toolOutput !== undefined) r.toolOutput = toolOutput;
      return { ...r, ...extra } as unknown as RawRecord;
    });
  }

  /**
   * A record row as written: its checksum is checked, and a row changed on
   * disk is reported once and served from the journal's copy of the record
   * when the journal still holds it.
   */
  private verifiedRow(taskId: string, row: Record<string, SqlValue>): Record<string, SqlValue> {
    if (row.sum === null || row.sum === undefined) return row;
    const text = (v: SqlValue | undefined): string | null => (v === null || v === undefined ? null : String(v));
    if (rowSum(String(row.role), String(row.content), text(row.tool_input), text(row.tool_output), text(row.payload_hash), text(row.extra)) === row.sum) return row;
    const where = `record ${String(row.idx)} of session ${taskId}`;
    const copy = this.journalCopy(taskId, Number(row.idx));
    if (!this.reportedRows.has(where)) {
      this.reportedRows.add(where);
      this.notice(`The stored ${where} does not match its checksum (changed on disk); ${copy ? "the journal's copy is used" : 'no intact copy is left, and it is shown as stored'}.`);
    }
    return copy ?? row;
  }

  /** The row a record had when it was journaled, if the journal still holds it. */
  private journalCopy(taskId: string, index: number): Record<string, SqlValue> | undefined {
    // The last line that wrote it: a lost record restored later is a `restore` line.
    const entry = this.journal
      ?.readAll()
      .filter((e) => e.task === taskId && (e.op === 'record' || e.op === 'restore') && (e.data as RecordData).record.index === index)
      .pop();
    return entry ? rowOf(taskId, entry.data as RecordData) : undefined;
  }

  artifacts(taskId: string): ArtifactEntry[] {
    return queryAll(this.db, 'SELECT * FROM artifact WHERE task_id = ? ORDER BY first_record, path', [taskId]).map((r) => ({
      path: String(r.path),
      reads: Number(r.reads),
      modifications: Number(r.modifications),
      creations: Number(r.creations),
      steps: JSON.parse(String(r.steps)) as number[],
      toolCalls: JSON.parse(String(r.tool_calls)) as string[],
      firstRecord: Number(r.first_record),
    }));
  }

  /**
   * The records of a session lost from a damaged journal line: a marker
   * stands in each one's place until `restoreRecord` puts the record back
   * from its source (a resumed `replay --db` does, from the transcript).
   */
  lostRecords(taskId: string): number[] {
    const row = queryAll(this.db, 'SELECT value FROM meta WHERE key = ?', [lostKey(taskId)])[0];
    return row ? (JSON.parse(String(row.value)) as number[]) : [];
  }

  // ---------------------------------------------------------------- applying

  /** Applies one journal entry to the in-memory database (idempotent). */
  apply(entry: JournalEntry): void {
    const { task, op } = entry;
    const data = entry.data as Record<string, unknown>;
    switch (op) {
      case 'task':
        this.db.run('INSERT OR IGNORE INTO task (task_id, title) VALUES (?, ?)', [task, String(data.title ?? '')]);
        break;
      case 'record': {
        const recordData = data as unknown as RecordData;
        const { record } = recordData;
        if (!Number.isSafeInteger(record?.index) || record.index < 0) throw new Error('a record without a valid index');
        this.db.run('INSERT OR IGNORE INTO task (task_id, title) VALUES (?, ?)', [task, '']);
        // A record whose journal line was lost leaves a gap: each missing one is filled with a marker
        // (said once at open), so the records after it stay where they were acknowledged.
        const held = this.recordCount(task);
        for (let missing = held; missing < record.index; missing++) {
          const marker: RawRecord = { index: missing, role: 'assistant', content: `[record ${missing} was lost: its journal line was damaged]` };
          this.insertRecord(task, { record: marker });
          this.updateArtifacts(task, marker);
        }
        if (record.index > held) this.setLost(task, [...this.lostRecords(task), ...Array.from({ length: record.index - held }, (_, k) => held + k)]);
        if (record.index > held) this.gaps.push({ task, indices: Array.from({ length: record.index - held }, (_, k) => held + k) });
        if (this.insertRecord(task, recordData)) this.updateArtifacts(task, record);
        break;
      }
      case 'restore': {
        const recordData = data as unknown as RecordData;
        const lost = this.lostRecords(task);
        const index = recordData.record?.index;
        if (!lost.includes(index)) break;
        const row = rowOf(task, recordData);
        const columns = Object.keys(row);
        this.db.run(`INSERT OR REPLACE INTO task_message (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`, columns.map((c) => row[c]!));
        this.setLost(task, lost.filter((i) => i !== index));
        // The files it touched: the task's artifact rows are derived again from its records.
        this.sessionRecords.delete(task);
        this.artifactCache.delete(task);
        this.db.run('DELETE FROM artifact WHERE task_id = ?', [task]);
        const records = this.records(task);
        for (const r of records) this.updateArtifacts(task, r);
        break;
      }
      case 'snapshot': {
        const { key, entry: value } = data as { key: string; entry: SnapshotEntry };
        this.db.run('INSERT OR REPLACE INTO task_compaction_snapshot (task_id, key, entry) VALUES (?, ?, ?)', [task, key, JSON.stringify(value)]);
        break;
      }
      case 'tool': {
        const { toolCallId, form } = data as { toolCallId: string; form: ReducedForm };
        this.db.run('INSERT OR REPLACE INTO task_tool_compaction (task_id, tool_call_id, form, offload_hash) VALUES (?, ?, ?, ?)', [
          task,
          toolCallId,
          JSON.stringify(form),
          null,
        ]);
        break;
      }
      case 'delete':
        this.deleteRows(task);
        break;
    }
    if (entry.seq > 0) this.db.run(`INSERT OR REPLACE INTO meta (key, value) VALUES ('lastSeq', ?)`, [String(entry.seq)]);
  }

  private setLost(task: string, indices: readonly number[]): void {
    if (indices.length === 0) this.db.run('DELETE FROM meta WHERE key = ?', [lostKey(task)]);
    else this.db.run('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)', [lostKey(task), JSON.stringify([...new Set(indices)].sort((a, b) => a - b))]);
  }

  /** Inserts a record row with its checksum; false if the row was already there. */
  private insertRecord(task: string, data: RecordData): boolean {
    const row = rowOf(task, data);
    const columns = Object.keys(row);
    this.db.run(`INSERT OR IGNORE INTO task_message (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`, columns.map((c) => row[c]!));
    return this.db.getRowsModified() > 0;
  }

  /** The artifact rows follow the record: a session's index is rebuilt from its records in memory and written through. */
  private updateArtifacts(task: string, record: RawRecord): void {
    let rec = this.sessionRecords.get(task);
    let index = this.artifactCache.get(task);
    /** Appends one record to the in-memory reconstruction; returns the paths its tool calls touched. */
    const feed = (r: RawRecord): string[] => observeArtifacts(index!, rec!.units, rec!.append(r));
    if (!rec || !index || rec.records.length !== record.index) {
      rec = new SessionRecord();
      index = new ArtifactIndex(this.redactor);
      for (const r of this.records(task)) {
        if (r.index >= record.index) break;
        feed(r);
      }
      this.sessionRecords.set(task, rec);
      this.artifactCache.set(task, index);
    }
    // Only the rows of the files this record touched change.
    for (const path of new Set(feed(record))) {
      const a = index.get(path);
      // A failed call's only file leaves the index (see ArtifactIndex.settle).
      if (!a) {
        this.db.run('DELETE FROM artifact WHERE task_id = ? AND path = ?', [task, path]);
        continue;
      }
      this.db.run(
        'INSERT OR REPLACE INTO artifact (task_id, path, reads, modifications, creations, steps, tool_calls, first_record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [task, a.path, a.reads, a.modifications, a.creations, JSON.stringify(a.steps), JSON.stringify(a.toolCalls), a.firstRecord],
      );
    }
  }

  /** Removes a session from every table, and its records and artifact index from memory. */
  deleteRows(task: string): void {
    for (const table of ['task_message', 'task_compaction_snapshot', 'task_tool_compaction', 'artifact', 'task']) {
      this.db.run(`DELETE FROM ${table} WHERE task_id = ?`, [task]);
    }
    this.db.run('DELETE FROM meta WHERE key = ?', [lostKey(task)]);
    this.sessionRecords.delete(task);
    this.artifactCache.delete(task);
  }
}
