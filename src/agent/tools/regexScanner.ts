/**
 * grep's regular expressions from the model run in a worker thread with a
 * deadline: JavaScript regular expressions cannot be interrupted, and a
 * backtracking pattern ("(x+x+)+y") on the extension host's thread would freeze
 * every extension. The worker splits lines exactly as the literal path does.
 */
import { Worker } from 'node:worker_threads';
import { ToolError } from './errors';
import { GREP_REGEX_FILE_MS, GREP_REGEX_LINE_CHARS } from './limits';

const REGEX_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const re = new RegExp(workerData.source, workerData.flags);
parentPort.on('message', (text) => {
  const hits = [];
  let lineNo = 0;
  for (let at = 0; at < text.length; ) {
    const newline = text.indexOf('\\n', at);
    const end = newline === -1 ? text.length : newline;
    lineNo++;
    let line = text.slice(at, end);
    if (line.endsWith('\\r')) line = line.slice(0, -1);
    at = end + 1;
    const m = re.exec(line.length > workerData.cap ? line.slice(0, workerData.cap) : line);
    if (m !== null) hits.push([lineNo, m.index]);
  }
  parentPort.postMessage(hits);
});
`;

export class RegexScanner {
  private worker: Worker | undefined;

  constructor(private readonly source: string, private readonly flags: string) {}

  /** Line number → index of the first match, for every matching line of `text`. */
  scan(text: string, file: string): Promise<Map<number, number>> {
    const worker = (this.worker ??= new Worker(REGEX_WORKER_SOURCE, { eval: true, workerData: { source: this.source, flags: this.flags, cap: GREP_REGEX_LINE_CHARS } }));
    return new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
      };
      const onMessage = (hits: [number, number][]): void => {
        done();
        resolve(new Map(hits));
      };
      const onError = (error: Error): void => {
        done();
        this.worker = undefined;
        reject(new ToolError(`The regular expression failed on ${file}: ${error.message}`));
      };
      const timer = setTimeout(() => {
        done();
        this.dispose();
        reject(new ToolError(`The regular expression took over ${GREP_REGEX_FILE_MS / 1000} s on ${file} and was stopped (catastrophic backtracking?): simplify it, or search literally (regex: false).`));
      }, GREP_REGEX_FILE_MS);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.postMessage(text);
    });
  }

  dispose(): void {
    void this.worker?.terminate();
    this.worker = undefined;
  }
}
