import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

/** Every package (bare specifier) the module graph under `entry` imports at runtime; type-only imports excluded. */
function packagesImportedBy(entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/^(?:import|export)\s+(?!type\s)[^;]*?from\s+'([^']+)'/gms)) {
      const specifier = match[1] as string;
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else packages.add(specifier);
    }
  };
  visit(join(src, entry));
  return packages;
}

const vendorSdk = /^(openai|@anthropic-ai\/sdk|@ai-sdk\/|ai$)/;

describe('the vendor SDKs', () => {
  it('are not imported by the root entry, so an install without them works', () => {
    const imported = [...packagesImportedBy('index.ts')];
    expect(imported.filter((name) => vendorSdk.test(name))).toEqual([]);
    // The walk follows the graph: it reaches packages the runtime does need.
    expect(imported).toContain('zod');
  });

  it('are not imported by the subpath entries of src/public/ (ledger, providers, plans, …) either', () => {
    for (const entry of readdirSync(join(src, 'public'))) {
      const imported = [...packagesImportedBy(`public/${entry}`)];
      expect(
        imported.filter((name) => vendorSdk.test(name)),
        entry,
      ).toEqual([]);
    }
  });

  it('are imported by their own entry points only', () => {
    expect([...packagesImportedBy('providers/openai/index.ts')]).toContain('openai');
    expect([...packagesImportedBy('providers/anthropic/index.ts')]).toContain('@anthropic-ai/sdk');
  });
});
