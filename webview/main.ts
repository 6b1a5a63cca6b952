/**
 * The Task Context panel's browser entry (bundled by esbuild as an IIFE into
 * dist/webview.js). It builds the panel, tells the host it is ready, and hands
 * every message of the host to the panel.
 */
import type { HostMessage } from '../src/protocol/messages';
import { App } from './app';
import { Host } from './host';

const HOST_MESSAGES: ReadonlySet<string> = new Set<HostMessage['type']>(['state/full', 'state/patch', 'action/result', 'reveal']);

function isHostMessage(data: unknown): data is HostMessage {
  return typeof data === 'object' && data !== null && HOST_MESSAGES.has(String((data as { type?: unknown }).type));
}

function start(): void {
  const root = document.getElementById('app');
  if (!root) throw new Error('the panel HTML has no #app element');
  const host = new Host();
  const app = new App(host, root);
  window.addEventListener('message', (event: MessageEvent<unknown>) => {
    if (isHostMessage(event.data)) app.handle(event.data);
  });
  host.post({ type: 'ready' });
}

start();
