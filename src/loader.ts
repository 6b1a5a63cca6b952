/**
 * The extension's main (dist/extension.js). The extension itself is built as
 * ES modules split at its larger source files (esbuild.mjs, dist/extension/),
 * and loaded here one module per import, its dependencies first: the host
 * compiles and runs a few tens of KB at a time, each import in a turn of the
 * event loop of its own, where loading the 590 KB bundle in one block held the
 * host's event loop, which every extension shares, for 34-85 ms on a 2-core
 * machine (issue 14). Then the composition root (src/extension.ts) activates.
 */
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as vscode from 'vscode';
import { messageOf } from './core/errors';
import type * as Root from './extension';

/** The modules of dist/extension/ in load order (dependencies first, the composition root last), set by esbuild.mjs. */
declare const __EXTENSION_MODULES__: readonly string[];

let root: Promise<typeof Root> | undefined;

/**
 * Imports the modules one after the other, each in a turn of the event loop of
 * its own (the host's module hooks can load a module without one: the imports
 * would run back to back); a module that cannot be loaded is named.
 */
async function loadRoot(): Promise<typeof Root> {
  let last: unknown;
  for (const file of __EXTENSION_MODULES__) {
    await new Promise((resolve) => setImmediate(resolve));
    const url = pathToFileURL(path.join(__dirname, 'extension', file)).href;
    try {
      last = await import(url);
    } catch (error) {
      throw new Error(`Context Keeper could not load its module dist/extension/${file}: ${messageOf(error)}`, { cause: error });
    }
  }
  return last as typeof Root;
}

export async function activate(context: vscode.ExtensionContext): Promise<Root.ContextKeeperApi | undefined> {
  return (await (root ??= loadRoot())).activate(context);
}

export async function deactivate(): Promise<void> {
  (await root?.catch(() => undefined))?.deactivate();
}
