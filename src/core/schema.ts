/**
 * The one way the project declares a schema: zod's functional build
 * (`zod/mini`), with zod's English messages. The method-chaining build gives
 * every schema node some forty methods of its own and cannot be tree-shaken:
 * it put 450 KB of zod in the extension bundle, and loading it alone blocked
 * the extension host ~35 ms at activation before any schema was made.
 *
 *   import * as z from '../core/schema';
 *
 * (never from 'zod' directly), so the messages are configured before anything
 * parses and the bundle keeps only what is used.
 */
import { config, globalRegistry, type ZodMiniType } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());

export * from 'zod/mini';

/** `schema` with the description a model or a JSON Schema reader sees (zod/mini has no `.describe()`). */
export function described<S extends ZodMiniType>(schema: S, description: string): S {
  globalRegistry.add(schema, { description });
  return schema;
}
