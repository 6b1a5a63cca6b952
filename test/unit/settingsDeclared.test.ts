/**
 * Settings are declared once: the zod fields in src/agent/settings.ts. The
 * package.json contribution VS Code shows must say the same about each (type,
 * default, limits), and declare no other setting.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as z from '../../src/core/schema';
import { settingFields, SETTINGS_SECTION } from '../../src/agent/settings';

const CHECKED = ['type', 'default', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'maxItems', 'items'] as const;

/** What package.json must say about each setting, from its zod field. */
function declaredFromSchema(): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [key, field] of Object.entries(settingFields())) {
    const schema = z.toJSONSchema(field as z.ZodMiniType, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    out[`${SETTINGS_SECTION}.${key}`] = Object.fromEntries(CHECKED.filter((k) => k in schema).map((k) => [k, schema[k]]));
  }
  return out;
}

describe('settings are declared once', () => {
  it("package.json's contributes.configuration matches the zod fields", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { contributes: { configuration: { properties: Record<string, Record<string, unknown>> } } };
    const contributed = pkg.contributes.configuration.properties;
    const expected = declaredFromSchema();
    assert.deepEqual(Object.keys(contributed).sort(), Object.keys(expected).sort(), 'the same settings');
    const differences: string[] = [];
    for (const [key, want] of Object.entries(expected)) {
      const have = Object.fromEntries(CHECKED.filter((k) => k in contributed[key]!).map((k) => [k, contributed[key]![k]]));
      if (!sameDeep(have, want)) differences.push(`${key}: package.json says ${JSON.stringify(have)}, settings.ts ${JSON.stringify(want)}`);
    }
    assert.deepEqual(differences, []);
  });

  it('a limit changed on one side only is caught (self-check)', () => {
    const expected = declaredFromSchema()[`${SETTINGS_SECTION}.maxStepsPerTurn`]!;
    assert.deepEqual(expected, { type: 'integer', default: 25, minimum: 1, maximum: 200 });
    assert.ok(!sameDeep({ ...expected, maximum: 100 }, expected));
  });
});

function sameDeep(a: unknown, b: unknown): boolean {
  try {
    assert.deepEqual(a, b);
    return true;
  } catch {
    return false;
  }
}
