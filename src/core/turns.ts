/**
 * Long work shares the thread: the extension host runs every extension of the
 * window on one event loop, so a task that holds it (opening a database, a
 * turn's appends and counts, building a table) gives it back between its steps.
 */

/** Who waits for a later turn, in the order they asked. */
const waiting: (() => void)[] = [];
let scheduled = false;

function schedule(): void {
  scheduled = true;
  if (typeof setImmediate === 'function') setImmediate(resumeOne);
  else setTimeout(resumeOne, 0);
}

/**
 * Resumes one waiter per turn. Callbacks of setImmediate queued before a turn
 * all run in that turn, back to back: with the warm-ups, the tokenizer's slices
 * and the store's steps each waiting for a turn of their own, their steps ran
 * as one block, as long as all of them together. The next waiter is scheduled
 * from inside this callback, so it runs on the following turn.
 */
function resumeOne(): void {
  const resume = waiting.shift();
  if (waiting.length > 0) schedule();
  else scheduled = false;
  resume?.();
}

/** Resolves on a later turn of the event loop (after pending I/O and timers), one waiter per turn; setImmediate where the host has it. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) schedule();
  });
}
