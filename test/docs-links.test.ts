import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

// Spelled in pieces so that this file does not name them itself.
const outside = new RegExp(
  [['BEHAVIOUR', 'md'].join('\\.'), ['ARCHITECTURE', 'md'].join('\\.'), ['\\.\\.', 'shared'].join('/')].join(
    '|',
  ),
);

/** The files git tracks, with the ones added but not committed yet. */
function trackedFiles(): string[] {
  const output = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  });
  return output.split('\n').filter((path) => path !== '' && existsSync(join(root, path)));
}

/** The markdown files whose links a reader follows: the README and docs/. */
function markdownFiles(): string[] {
  const docs = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md'));
  return ['README.md', ...docs.map((name) => `docs/${name}`)];
}

describe('the repository docs', () => {
  it('refer to no file outside the repository, in any tracked file (source comments reach the .d.ts)', () => {
    const offending = trackedFiles()
      .filter((path) => !/\.(png|jpg|ico|woff2?)$/.test(path))
      .filter((path) => outside.test(readFileSync(join(root, path), 'utf8')));
    expect(offending).toEqual([]);
  });

  it('link only to files that exist, from the README and docs/*.md', () => {
    const broken: string[] = [];
    for (const file of markdownFiles()) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const path = (target as string).split('#')[0] as string;
        if (path === '' || /^[a-z]+:/.test(path)) continue;
        if (!existsSync(join(root, dirname(file), path))) broken.push(`${file} -> ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
