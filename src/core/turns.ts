/**
 * Long work shares the thread: the extension host runs every extension of the
 * window on one event loop, so a task that holds it (opening a database, a
 * turn's appends and counts, building a table) gives it back between its steps.
 */

/** Resolves on a later turn of the event loop (after pending I/O and timers); setImmediate where the host has it. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof setImmediate === 'function') setImmediate(resolve);
    else setTimeout(resolve, 0);
  });
}
