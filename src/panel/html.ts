/**
 * The Task Context panel's HTML document. No `vscode` import: the host passes
 * the webview URIs as strings (`webview.asWebviewUri(...).toString()` and
 * `webview.cspSource`), so tests can build the same page in a browser.
 *
 * Everything the page loads comes from `cspSource`: the script (allowed by its
 * per-render nonce), the stylesheets and the codicon font. No inline style, no
 * inline script, nothing remote.
 */
import { randomBytes } from 'node:crypto';

export interface PanelHtmlOptions {
  /** A fresh nonce per render (`makeNonce()`). */
  readonly nonce: string;
  /** `webview.cspSource`. */
  readonly cspSource: string;
  /** dist/webview.js as a webview URI. */
  readonly scriptUri: string;
  /** dist/webview.css as a webview URI. */
  readonly styleUri: string;
  /** dist/codicon.css as a webview URI (it loads codicon.ttf from beside it). */
  readonly codiconUri: string;
}

/** 128 random bits, base64: a CSP nonce. */
export function makeNonce(): string {
  return randomBytes(16).toString('base64');
}

const NONCE = /^[A-Za-z0-9+/_-]+={0,2}$/;
/** Space-separated CSP sources: 'self'-style keywords or scheme/host sources, nothing else. */
const CSP_SOURCES = /^(?:'[a-z-]+'|[A-Za-z][A-Za-z0-9+.-]*:(?:\/\/[A-Za-z0-9*.:\-\[\]_]+(?:\/[^\s;"',]*)?)?)(?: (?:'[a-z-]+'|[A-Za-z][A-Za-z0-9+.-]*:(?:\/\/[A-Za-z0-9*.:\-\[\]_]+(?:\/[^\s;"',]*)?)?))*$/;

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function panelHtml(options: PanelHtmlOptions): string {
  if (!NONCE.test(options.nonce)) throw new Error('panelHtml: the nonce must be base64 or hex (see makeNonce)');
  // The CSP sits in an attribute: a double quote or a semicolon could widen it, and so
  // could an 'unsafe-…' keyword. VS Code's own value may list several sources
  // (the web workbench gives "'self' https://*.vscode-cdn.net").
  if (!CSP_SOURCES.test(options.cspSource) || /unsafe-/i.test(options.cspSource)) {
    throw new Error(`panelHtml: unexpected cspSource ${JSON.stringify(options.cspSource)}`);
  }
  const csp = [
    "default-src 'none'",
    `style-src ${options.cspSource}`,
    `font-src ${options.cspSource}`,
    `img-src ${options.cspSource} data:`,
    `script-src 'nonce-${options.nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(csp)};">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeAttribute(options.codiconUri)}">
<link rel="stylesheet" href="${escapeAttribute(options.styleUri)}">
<title>Task Context</title>
</head>
<body>
<div id="app" class="app" aria-busy="true"><p class="loading">Loading the Task Context…</p></div>
<script nonce="${escapeAttribute(options.nonce)}" src="${escapeAttribute(options.scriptUri)}"></script>
</body>
</html>
`;
}
