import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = join(import.meta.dirname, '..', 'src');

// ARCHITECTURE.md §1, top to bottom: a folder may import only from folders below it (or itself).
const layers = [
  'cli',
  'runtime',
  'actors',
  'runner',
  'plans',
  'lanes',
  'policies',
  'providers',
  'tools',
  'ledger',
  'core',
];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? files(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

function folderOf(file: string): string {
  return relative(src, file).split('/')[0] ?? '';
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/from '(\.{1,2}\/[^']+)'/g)].map((match) => join(file, '..', match[1] as string));
}

describe('the layout of src', () => {
  it('has imports that point down the layers only', () => {
    const upward: string[] = [];
    for (const file of files(src)) {
      const from = folderOf(file);
      if (from === 'index.ts' || from === 'testing') continue;
      for (const target of imports(file)) {
        const to = folderOf(target);
        if (to === from) continue;
        const fromRank = layers.indexOf(from);
        const toRank = layers.indexOf(to);
        if (toRank <= fromRank) upward.push(`${relative(src, file)} -> ${relative(src, target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('keeps policies pure: no I/O, no timers, no clock or randomness of their own', () => {
    const impure: string[] = [];
    for (const file of files(join(src, 'policies'))) {
      const text = readFileSync(file, 'utf8');
      for (const pattern of [
        /from 'node:/,
        /Date\.now/,
        /Math\.random/,
        /setTimeout|setInterval/,
        /process\./,
      ]) {
        if (pattern.test(text)) impure.push(`${relative(src, file)}: ${pattern.source}`);
      }
      for (const target of imports(file)) {
        if (!['policies', 'core'].includes(folderOf(target)))
          impure.push(`${relative(src, file)} imports ${relative(src, target)}`);
      }
    }
    expect(impure).toEqual([]);
  });
});
