// Helpers for the UI tests (test/integration/ui/*.ui.mjs): driving VS Code's
// workbench in the browser through playwright. Every wait is a retry loop with a
// deadline, because contributions and views appear a few seconds after the
// workbench does, and the first attempt at a gesture is sometimes swallowed.

/** Waits until `probe()` returns a truthy value and returns it; throws after `timeout` ms. */
export async function waitUntil(probe, { timeout = 30000, interval = 250, what = 'condition' } = {}) {
  const deadline = Date.now() + timeout;
  let lastError;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError ? ` (last error: ${lastError.message ?? lastError})` : '';
      throw new Error(`timed out after ${timeout} ms waiting for ${what}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** The command palette's input box. */
export function quickInput(page) {
  return page.locator('.quick-input-widget .quick-input-box input');
}

/**
 * Runs a command by its palette title ("Category: Title"), retrying until the
 * command is listed (extensions register theirs some seconds after start-up).
 */
export async function runCommand(page, title, { timeout = 30000 } = {}) {
  const input = quickInput(page);
  await waitUntil(
    async () => {
      await closeQuickInput(page);
      await page.keyboard.press('F1');
      await input.waitFor({ state: 'visible', timeout: 5000 });
      await input.fill(`>${title}`, { timeout: 3000 });
      await page.waitForTimeout(300);
      const rows = await page.locator('.quick-input-list .monaco-list-row').allInnerTexts();
      return rows.some((row) => row.split('\n')[0]?.trim() === title);
    },
    { timeout, interval: 500, what: `command "${title}" in the palette` },
  );
  await page.keyboard.press('Enter');
  // The palette fades out; the next gesture must not land in it.
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5000 }).catch(() => undefined);
}

/**
 * Answers VS Code's simple file dialog (the one code-server shows) with a path.
 * The dialog fills its input with the current folder once it has read it; a path
 * typed before that is overwritten, so this waits for the dialog's own value,
 * types the path, and types it again while the dialog is still open after Enter.
 */
export async function answerFileDialog(page, path, { timeout = 30000 } = {}) {
  const input = quickInput(page);
  const widget = page.locator('.quick-input-widget');
  await waitUntil(async () => (await input.isVisible()) && (await input.inputValue()) !== '', { timeout: 10000, what: 'the file dialog to show its folder' });
  await waitUntil(
    async () => {
      if (!(await widget.isVisible())) return true;
      await input.fill(path);
      await waitUntil(async () => (await input.inputValue()) === path, { timeout: 2000, interval: 100, what: 'the typed path' });
      await page.keyboard.press('Enter');
      return widget.waitFor({ state: 'hidden', timeout: 3000 }).then(() => true, () => false);
    },
    { timeout, interval: 250, what: `the file dialog to accept ${path}` },
  );
}

/**
 * The activation time VS Code shows for an extension in Developer: Show Running
 * Extensions ("Activation: 231ms"): the time the extension host spent loading
 * its code and running its activate(). Undefined when the row is not shown.
 */
export async function runningExtensionActivationMs(page, extensionId) {
  await runCommand(page, 'Developer: Show Running Extensions');
  const row = page.locator('.runtime-extensions-editor .monaco-list-row', { hasText: extensionId }).first();
  const text = await waitUntil(async () => {
    const value = await row.locator('.activation-time').innerText().catch(() => '');
    return /\d/.test(value) ? value : undefined;
  }, { timeout: 15000, what: `${extensionId} in Running Extensions` }).catch(() => undefined);
  await page.keyboard.press('Escape');
  const ms = /(\d+)\s*ms/.exec(text ?? '')?.[1];
  return ms === undefined ? undefined : Number(ms);
}

/** Closes the quick input (palette, quick pick) if it is open, and waits until it is gone. */
export async function closeQuickInput(page) {
  const widget = page.locator('.quick-input-widget');
  if (!(await widget.isVisible())) return;
  await page.keyboard.press('Escape');
  await widget.waitFor({ state: 'hidden', timeout: 5000 });
}

/** Monaco renders spaces as U+00A0; this is the visible text of a locator with normal spaces. */
export async function visibleText(locator) {
  return (await locator.innerText()).replace(/\u00a0/g, ' ');
}

/** Opens the chat view and returns its input editor. */
export async function openChat(page) {
  await runCommand(page, 'Chat: Open Chat');
  const input = page.locator('.interactive-input-part .interactive-input-editor .monaco-editor').first();
  await input.waitFor({ state: 'visible', timeout: 30000 });
  return input;
}

/** The model picker of the chat input. */
export function modelPicker(page) {
  return page.locator('.interactive-input-part .model-picker-split').first();
}

/**
 * Picks a model by its name in the chat view's model picker (e.g. "Fake Small",
 * listed under "Fake (tests)"); resolves to true when the picker shows it.
 */
export async function pickModel(page, name, vendorLabel = 'Fake (tests)') {
  // The picker's list is rebuilt while models resolve; a pick that did not stick is tried again.
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      if (await pickModelOnce(page, name, vendorLabel)) return true;
    } catch (error) {
      lastError = error;
    }
    await page.keyboard.press('Escape').catch(() => undefined);
    await page.waitForTimeout(1000);
  }
  throw lastError ?? new Error(`the model picker does not show ${name} (it shows ${(await modelPicker(page).innerText().catch(() => '?')).trim()})`);
}

async function pickModelOnce(page, name, vendorLabel) {
  const picker = modelPicker(page);
  // The picker shows "Models" until a vendor's models are resolved.
  await waitUntil(async () => /^Fake (Large|Small)$/.test((await picker.innerText()).trim()), { what: 'the model picker to show a fake model' });
  if ((await picker.innerText()).trim() === name) return true;
  const row = page.locator(`.action-widget .monaco-list-row[aria-label^="${name}, ${vendorLabel}"]`);
  await waitUntil(
    async () => {
      if (!(await row.first().isVisible())) {
        await page.keyboard.press('Escape');
        await picker.click();
        await page.locator('.action-widget.action-widget-dropdown').waitFor({ state: 'visible', timeout: 5000 });
        await page.keyboard.type(name);
      }
      return row.first().isVisible();
    },
    { interval: 500, what: `${name} in the model picker` },
  );
  await row.first().click();
  return waitUntil(async () => (await picker.innerText()).trim() === name, { timeout: 10000, what: `the picker to show ${name}` });
}

/**
 * Types a message into the chat input (checking it arrived whole) and sends it with Enter.
 * A message that starts with a participant ("@keeper …") is sent only once the input shows
 * that participant as one: VS Code decorates "@name" when it knows the participant, and
 * until then (a window still loading its extensions) the message would go to the default agent.
 */
export async function sendChatMessage(page, message, { timeout = 20000 } = {}) {
  const input = page.locator('.interactive-input-part .interactive-input-editor .monaco-editor').first();
  const participant = /^@([\w-]+)\s/.exec(message)?.[1];
  const decorated = input.locator('.view-lines span[class*="ced-chat"]', { hasText: new RegExp(`^@${participant}$`) });
  // The input wraps long lines: compare with the line breaks folded.
  const holds = async () => (await visibleText(input.locator('.view-lines'))).replace(/\s+/g, ' ').trim() === message;
  /** The message typed into the input, replacing whatever it held, unless it holds the message already. */
  const typed = async () => {
    if (await holds()) return;
    await input.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Backspace');
    await page.keyboard.type(message, { delay: 10 });
  };
  await waitUntil(
    async () => {
      await typed();
      if (!(await holds())) return false;
      return participant === undefined || (await decorated.count()) > 0;
    },
    { timeout, interval: 500, what: participant ? `the chat input to hold the message with @${participant} known` : 'the chat input to hold the message' },
  );
  // A completion list still open (the participants offered after "@", slow to close on a busy machine)
  // would take the Enter and put its first item in the input: it is closed first.
  const suggestions = page.locator('.interactive-input-part .suggest-widget.visible');
  const closeSuggestions = async () => {
    if ((await suggestions.count()) > 0) await page.keyboard.press('Escape');
  };
  await closeSuggestions();
  await page.keyboard.press('Enter');
  // The message has left when the input no longer holds it; an Enter the input swallowed (a chat still
  // restoring after a reload) is pressed again, with the input focused. A sent message leaves its own
  // participant in the input (VS Code keeps it for the next message); an input left holding another one
  // ("@agent " for an @keeper message) had its Enter taken by a completion: the message is typed again.
  // An input that still holds the message, whatever else it holds (a stray line an Enter or a completion put after
  // it), did not send it: it is typed again, whole. (Other text may be the input's placeholder after the participant.)
  const body = message.replace(/^@[\w-]+\s+/, '');
  const left = async () => {
    const held = (await visibleText(input.locator('.view-lines'))).replace(/\s+/g, ' ').trim();
    if (held.includes(body)) return false;
    const lone = /^@([\w-]+)$/.exec(held);
    return !lone || lone[1] === participant;
  };
  await waitUntil(
    async () => {
      if (await left()) return true;
      await input.click();
      await typed();
      await page.keyboard.press('End');
      await closeSuggestions();
      await page.keyboard.press('Enter');
      return left();
    },
    { timeout, interval: 2000, what: 'the chat input to send the message' },
  );
}

/** The chat responses containing `text`. */
export function chatResponses(page, text) {
  return page.locator('.interactive-list .interactive-response', { hasText: text });
}

/**
 * The buttons of the inline confirmation VS Code shows for a tool call (docked
 * in the chat view above the input): "Allow…" and "Skip".
 */
export function inlineConfirmation(page) {
  const chat = page.locator('.interactive-session');
  return { chat, allow: chat.locator('.monaco-button', { hasText: /^(Allow|Continue)/ }).last(), skip: chat.locator('.monaco-button', { hasText: /^(Skip|Cancel|Deny)$/ }).last() };
}

/** Resolves to true once a chat response containing `text` is rendered (false after `timeout`). */
export async function responseRendered(page, text, timeout = 30000) {
  return chatResponses(page, text)
    .first()
    .waitFor({ state: 'visible', timeout })
    .then(() => true)
    .catch(() => false);
}
