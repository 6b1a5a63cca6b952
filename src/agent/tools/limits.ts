/** The limits of the @keeper tools, in one place: sizes, counts and times each tool keeps within. */

export const DEFAULT_COMMAND_TIMEOUT_MS = 120_000;
export const MIN_COMMAND_TIMEOUT_MS = 1_000;
export const MAX_COMMAND_TIMEOUT_MS = 1_800_000;
export const DEFAULT_MAX_OUTPUT_CHARS = 100_000;
/** grep with regex: true gives up on a file after this long (a backtracking pattern never blocks the host). */
export const GREP_REGEX_FILE_MS = 5_000;
/** grep with regex: true matches at most this much of one line. */
export const GREP_REGEX_LINE_CHARS = 2_000;
/** The smallest output cap honoured: below it no result could carry its own notes. */
export const MIN_MAX_OUTPUT_CHARS = 1_000;

export const READ_MAX_LINES = 2_000;
export const LIST_MAX_ENTRIES = 1_000;
export const GLOB_MAX_PATHS = 1_000;
/** Matches collected before sorting; past it the walk stops and says so. */
export const GLOB_MAX_COLLECTED = 50_000;
export const GREP_DEFAULT_RESULTS = 200;
export const GREP_MAX_RESULTS = 2_000;
export const GREP_MAX_FILE_BYTES = 2 * 1024 * 1024;
export const GREP_LINE_CHARS = 300;
/** Bytes examined for a NUL to call a file binary. */
export const BINARY_PROBE_BYTES = 8_192;
/** Grace after SIGTERM before the process group gets SIGKILL. */
export const KILL_GRACE_MS = 2_000;
/** How long a finished command's pipes may stay open (held by a background process) before they are closed. */
export const PIPE_DRAIN_MS = 1_000;
export const PROGRESS_EVERY_MS = 10_000;
export const DIFF_MAX_LINES = 20;
/** Directories no walk enters unless the pattern names them. */
export const SKIPPED_DIRS: readonly string[] = ['.git', 'node_modules'];
