/**
 * Loads the Task Context panel in headless Chromium as VS Code would: the page
 * built by `panelHtml` (with its CSP), the bundles of dist/ served from a fake
 * webview origin, a stub `acquireVsCodeApi` that records what the panel posts
 * and keeps its `getState`/`setState`, and a theme (body class + the
 * `--vscode-*` variables VS Code puts on the document element).
 *
 * Code passed to `page.evaluate` runs in the browser but is type-checked here
 * without the DOM library: it reaches the page through `globalThis as any`.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { HostMessage, PanelState, WebviewMessage } from '../../src/protocol/messages';
import { makeNonce, panelHtml } from '../../src/panel/html';

export const ORIGIN = 'https://panel.test';
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

export const repoRoot = findRepoRoot(__dirname);
const dist = path.join(repoRoot, 'dist');

function findRepoRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'esbuild.mjs'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no repository root above ${from}`);
  }
}

export async function launchBrowser(): Promise<Browser> {
  for (const file of ['webview.js', 'webview.css', 'codicon.css', 'codicon.ttf']) {
    assert.ok(fs.existsSync(path.join(dist, file)), `dist/${file} is missing: run \`node esbuild.mjs webview\` first`);
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
}

export type ThemeName = 'light' | 'dark' | 'high-contrast';

const COMMON_VARS: Readonly<Record<string, string>> = {
  '--vscode-font-family': '-apple-system, BlinkMacSystemFont, "Segoe WPC", "Segoe UI", "Liberation Sans", sans-serif',
  '--vscode-font-size': '13px',
  '--vscode-font-weight': 'normal',
  '--vscode-editor-font-family': '"Cascadia Code", Menlo, "DejaVu Sans Mono", monospace',
};

/** Colours of VS Code's Light Modern and Dark Modern themes (and High Contrast), as VS Code injects them. */
export const THEMES: Readonly<Record<ThemeName, Readonly<Record<string, string>>>> = {
  light: {
    '--vscode-foreground': '#3b3b3b',
    '--vscode-descriptionForeground': '#717171',
    '--vscode-errorForeground': '#c72e0f',
    '--vscode-focusBorder': '#005fb8',
    '--vscode-icon-foreground': '#3b3b3b',
    '--vscode-contrastBorder': 'transparent',
    '--vscode-editor-background': '#ffffff',
    '--vscode-sideBar-background': '#f8f8f8',
    '--vscode-sideBarSectionHeader-foreground': '#3b3b3b',
    '--vscode-sideBarSectionHeader-border': '#e5e5e5',
    '--vscode-panel-border': '#e5e5e5',
    '--vscode-widget-border': '#e5e5e5',
    '--vscode-editorWidget-background': '#f8f8f8',
    '--vscode-button-background': '#005fb8',
    '--vscode-button-foreground': '#ffffff',
    '--vscode-button-hoverBackground': '#0258a8',
    '--vscode-button-border': '#0000001a',
    '--vscode-button-secondaryBackground': '#e5e5e5',
    '--vscode-button-secondaryForeground': '#3b3b3b',
    '--vscode-button-secondaryHoverBackground': '#cccccc',
    '--vscode-badge-background': '#cccccc',
    '--vscode-badge-foreground': '#3b3b3b',
    '--vscode-input-background': '#ffffff',
    '--vscode-input-foreground': '#3b3b3b',
    '--vscode-input-border': '#cecece',
    '--vscode-input-placeholderForeground': '#767676',
    '--vscode-inputValidation-warningBackground': '#f6f5d2',
    '--vscode-inputValidation-warningBorder': '#b89500',
    '--vscode-inputValidation-errorBorder': '#be1100',
    '--vscode-list-hoverBackground': '#f2f2f2',
    '--vscode-toolbar-hoverBackground': '#b8b8b850',
    '--vscode-textLink-foreground': '#005fb8',
    '--vscode-textLink-activeForeground': '#005fb8',
    '--vscode-textPreformat-foreground': '#3b3b3b',
    '--vscode-textBlockQuote-background': '#f2f2f2',
    '--vscode-editorWarning-foreground': '#bf8803',
    '--vscode-scrollbarSlider-background': '#64646433',
    '--vscode-charts-foreground': '#3b3b3b',
    '--vscode-charts-lines': '#3b3b3b80',
    '--vscode-charts-red': '#e51400',
    '--vscode-charts-blue': '#1a85ff',
    '--vscode-charts-yellow': '#bf8803',
    '--vscode-charts-orange': '#d18616',
    '--vscode-charts-green': '#388a34',
    '--vscode-charts-purple': '#652d90',
  },
  dark: {
    '--vscode-foreground': '#cccccc',
    '--vscode-descriptionForeground': '#9d9d9d',
    '--vscode-errorForeground': '#f85149',
    '--vscode-focusBorder': '#0078d4',
    '--vscode-icon-foreground': '#cccccc',
    '--vscode-contrastBorder': 'transparent',
    '--vscode-editor-background': '#1f1f1f',
    '--vscode-sideBar-background': '#181818',
    '--vscode-sideBarSectionHeader-foreground': '#cccccc',
    '--vscode-sideBarSectionHeader-border': '#2b2b2b',
    '--vscode-panel-border': '#2b2b2b',
    '--vscode-widget-border': '#313131',
    '--vscode-editorWidget-background': '#202020',
    '--vscode-button-background': '#0078d4',
    '--vscode-button-foreground': '#ffffff',
    '--vscode-button-hoverBackground': '#026ec1',
    '--vscode-button-border': '#ffffff12',
    '--vscode-button-secondaryBackground': '#313131',
    '--vscode-button-secondaryForeground': '#cccccc',
    '--vscode-button-secondaryHoverBackground': '#3c3c3c',
    '--vscode-badge-background': '#616161',
    '--vscode-badge-foreground': '#f8f8f8',
    '--vscode-input-background': '#313131',
    '--vscode-input-foreground': '#cccccc',
    '--vscode-input-border': '#3c3c3c',
    '--vscode-input-placeholderForeground': '#989898',
    '--vscode-inputValidation-warningBackground': '#352a05',
    '--vscode-inputValidation-warningBorder': '#b89500',
    '--vscode-inputValidation-errorBorder': '#be1100',
    '--vscode-list-hoverBackground': '#2a2d2e',
    '--vscode-toolbar-hoverBackground': '#5a5d5e50',
    '--vscode-textLink-foreground': '#4daafc',
    '--vscode-textLink-activeForeground': '#4daafc',
    '--vscode-textPreformat-foreground': '#d0d0d0',
    '--vscode-textBlockQuote-background': '#222222',
    '--vscode-editorWarning-foreground': '#cca700',
    '--vscode-scrollbarSlider-background': '#79797966',
    '--vscode-charts-foreground': '#cccccc',
    '--vscode-charts-lines': '#cccccc80',
    '--vscode-charts-red': '#f14c4c',
    '--vscode-charts-blue': '#3794ff',
    '--vscode-charts-yellow': '#cca700',
    '--vscode-charts-orange': '#d18616',
    '--vscode-charts-green': '#89d185',
    '--vscode-charts-purple': '#b180d7',
  },
  'high-contrast': {
    '--vscode-foreground': '#ffffff',
    '--vscode-descriptionForeground': '#ffffffb3',
    '--vscode-errorForeground': '#f48771',
    '--vscode-focusBorder': '#f38518',
    '--vscode-icon-foreground': '#ffffff',
    '--vscode-contrastBorder': '#6fc3df',
    '--vscode-contrastActiveBorder': '#f38518',
    '--vscode-editor-background': '#000000',
    '--vscode-sideBar-background': '#000000',
    '--vscode-sideBarSectionHeader-border': '#6fc3df',
    '--vscode-panel-border': '#6fc3df',
    '--vscode-button-background': '#000000',
    '--vscode-button-foreground': '#ffffff',
    '--vscode-button-border': '#6fc3df',
    '--vscode-button-secondaryBackground': '#000000',
    '--vscode-button-secondaryForeground': '#ffffff',
    '--vscode-badge-background': '#000000',
    '--vscode-badge-foreground': '#ffffff',
    '--vscode-input-background': '#000000',
    '--vscode-input-foreground': '#ffffff',
    '--vscode-input-border': '#6fc3df',
    '--vscode-textLink-foreground': '#21a6ff',
    '--vscode-textLink-activeForeground': '#21a6ff',
    '--vscode-editorWarning-foreground': '#ffd370',
    '--vscode-scrollbarSlider-background': '#6fc3df99',
    '--vscode-charts-foreground': '#ffffff',
    '--vscode-charts-red': '#f48771',
    '--vscode-charts-blue': '#3794ff',
    '--vscode-charts-yellow': '#ffd370',
    '--vscode-charts-orange': '#d18616',
    '--vscode-charts-green': '#89d185',
    '--vscode-charts-purple': '#b180d7',
  },
};

const BODY_CLASS: Readonly<Record<ThemeName, string>> = { light: 'vscode-light', dark: 'vscode-dark', 'high-contrast': 'vscode-high-contrast' };

export interface PanelOptions {
  readonly theme?: ThemeName;
  readonly viewport?: { width: number; height: number };
  /** What `getState()` returns at load (the UI state a previous load saved). */
  readonly uiState?: unknown;
}

/** The panel in a page, and the host's side of the conversation. */
export class PanelPage {
  readonly consoleErrors: string[] = [];

  constructor(readonly page: Page) {
    page.on('console', (m) => {
      if (m.type() === 'error') this.consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => this.consoleErrors.push(String(e)));
  }

  /** Delivers a host message as VS Code does (a `message` event on the window); rendering is synchronous. */
  async send(message: HostMessage): Promise<void> {
    await this.page.evaluate((m) => {
      const w = globalThis as any;
      w.dispatchEvent(new w.MessageEvent('message', { data: m }));
    }, message as unknown);
  }

  async sendState(state: PanelState): Promise<void> {
    await this.send({ type: 'state/full', state });
  }

  /** Every message the panel posted, in order. */
  async posted(): Promise<WebviewMessage[]> {
    return (await this.page.evaluate(() => (globalThis as any).__posted)) as WebviewMessage[];
  }

  async clearPosted(): Promise<void> {
    await this.page.evaluate(() => {
      (globalThis as any).__posted.length = 0;
    });
  }

  /** The last message posted (after `clearPosted`, the one an action sent). */
  async lastPosted(): Promise<WebviewMessage | undefined> {
    const all = await this.posted();
    return all[all.length - 1];
  }

  /** What the panel last gave `setState`. */
  async savedState(): Promise<any> {
    return this.page.evaluate(() => (globalThis as any).__vscodeState());
  }

  /** CSP violations the page reported. */
  async cspViolations(): Promise<string[]> {
    return (await this.page.evaluate(() => (globalThis as any).__csp)) as string[];
  }

  async text(selector: string): Promise<string> {
    return (await this.page.locator(selector).first().textContent()) ?? '';
  }

  /** The `<li>` of a fact (any list). */
  fact(id: string) {
    return this.page.locator(`li[data-key="${id}"]`);
  }
}

/** Opens the panel page (themed) and waits until it posted `ready`. */
export async function openPanel(browser: Browser, options: PanelOptions = {}): Promise<PanelPage> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 420, height: 1100 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const html = panelHtml({
    nonce: makeNonce(),
    cspSource: ORIGIN,
    scriptUri: `${ORIGIN}/dist/webview.js`,
    styleUri: `${ORIGIN}/dist/webview.css`,
    codiconUri: `${ORIGIN}/dist/codicon.css`,
  });
  await page.route(`${ORIGIN}/**`, async (route) => {
    const url = new URL(route.request().url());
    if (url.pathname === '/index.html') {
      await route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html });
      return;
    }
    const file = path.join(dist, path.basename(url.pathname));
    if (!url.pathname.startsWith('/dist/') || !fs.existsSync(file)) {
      await route.fulfill({ status: 404, body: 'not found' });
      return;
    }
    const types: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css', '.ttf': 'font/ttf' };
    await route.fulfill({ status: 200, contentType: types[path.extname(file)] ?? 'application/octet-stream', body: fs.readFileSync(file) });
  });
  await page.addInitScript((initial) => {
    const w = globalThis as any;
    w.__posted = [];
    w.__csp = [];
    let saved: unknown = initial;
    w.__vscodeState = () => saved;
    w.acquireVsCodeApi = () => ({
      postMessage: (message: unknown) => w.__posted.push(JSON.parse(JSON.stringify(message))),
      getState: () => saved,
      setState: (state: unknown) => {
        saved = JSON.parse(JSON.stringify(state));
      },
    });
    w.document.addEventListener('securitypolicyviolation', (e: any) => w.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  }, (options.uiState ?? null) as unknown);
  const panel = new PanelPage(page);
  await page.goto(`${ORIGIN}/index.html`);
  await applyTheme(page, options.theme ?? 'dark');
  await page.waitForFunction(() => (globalThis as any).__posted.some((m: any) => m.type === 'ready'));
  return panel;
}

/** What VS Code does to a webview's document for a theme: a body class and the colour variables on `<html>`. */
export async function applyTheme(page: Page, theme: ThemeName): Promise<void> {
  const vars = { ...COMMON_VARS, ...THEMES[theme] };
  await page.evaluate(
    ([bodyClass, variables]) => {
      const d = (globalThis as any).document;
      d.body.classList.remove('vscode-light', 'vscode-dark', 'vscode-high-contrast');
      d.body.classList.add(bodyClass);
      for (const [name, value] of Object.entries(variables as Record<string, string>)) d.documentElement.style.setProperty(name, value);
      // The workbench paints the view's background behind the webview.
      d.documentElement.style.setProperty('background-color', 'var(--vscode-sideBar-background)');
    },
    [BODY_CLASS[theme], vars] as const,
  );
}

export async function closePanel(panel: PanelPage | undefined): Promise<void> {
  if (panel) await panel.page.context().close();
}

/**
 * The hooks every webview spec shares: one browser for the file, and the panel
 * a test opened closed after it. `open` closes the test's previous panel first.
 */
export function panelSuite(): { open(options?: PanelOptions): Promise<PanelPage> } {
  let browser: Browser | undefined;
  let current: PanelPage | undefined;
  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    await closePanel(current);
    current = undefined;
  });
  return {
    async open(options: PanelOptions = {}): Promise<PanelPage> {
      if (!browser) throw new Error('panelSuite: open() runs inside a test, after the browser is launched');
      await closePanel(current);
      current = await openPanel(browser, options);
      return current;
    },
  };
}
