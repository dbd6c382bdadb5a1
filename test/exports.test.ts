import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import config from '../vitest.config.js';

const root = join(import.meta.dirname, '..');

interface Target {
  readonly types: string;
  readonly default: string;
}

const exportsMap = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, Target> }
).exports;

/** `agentlanes` for `.`, `agentlanes/ledger` for `./ledger`. */
const specifierOf = (subpath: string): string =>
  subpath === '.' ? 'agentlanes' : `agentlanes${subpath.slice(1)}`;

/** The source file `tsconfig.build.json` compiles into `./dist/….js`. */
const sourceOf = (built: string): string => built.replace(/^\.\/dist\//, './src/').replace(/\.js$/, '.ts');

/** The names an entry file exports, read off its export declarations; an `export *` is reported as `*`. */
function exportedNames(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.ES2022);
  const names: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    const clause = statement.exportClause;
    if (clause === undefined || !ts.isNamedExports(clause)) names.push('*');
    else names.push(...clause.elements.map((element) => element.name.text));
  }
  return names;
}

describe('the package entry points', () => {
  it('keep the root to the contract: at most 50 names, each named once', () => {
    const names = exportedNames('src/index.ts');
    expect(names).not.toContain('*');
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBeLessThanOrEqual(50);
    for (const name of [
      'createRuntime',
      'defineTool',
      'RuntimeError',
      'isRuntimeError',
      'Session',
      'RuntimeEvent',
    ])
      expect(names).toContain(name);
  });

  it('name every export of the subpath entries explicitly, each in one subpath besides the root', () => {
    const rootNames = new Set(exportedNames('src/index.ts'));
    const homes = new Map<string, string>();
    for (const file of readdirSync(join(root, 'src', 'public'))) {
      const names = exportedNames(`src/public/${file}`);
      expect(names, file).not.toContain('*');
      expect(names.length, file).toBeGreaterThan(0);
      for (const name of names) {
        if (rootNames.has(name)) continue;
        expect(homes.get(name), `${name} in ${file}`).toBeUndefined();
        homes.set(name, file);
      }
    }
  });

  it('map every subpath to its source alike in package.json, tsconfig.json and vitest.config.ts', () => {
    const tsconfig = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')) as {
      compilerOptions: { paths: Record<string, string[]> };
    };
    const aliases = config.resolve?.alias as Record<string, string>;
    for (const [subpath, target] of Object.entries(exportsMap)) {
      const source = sourceOf(target.default);
      expect(target.types, subpath).toBe(target.default.replace(/\.js$/, '.d.ts'));
      expect(existsSync(join(root, source)), source).toBe(true);
      expect(tsconfig.compilerOptions.paths[specifierOf(subpath)], subpath).toEqual([source]);
      expect(aliases[specifierOf(subpath)], subpath).toBe(join(root, source));
    }
    expect(Object.keys(tsconfig.compilerOptions.paths).sort()).toEqual(
      Object.keys(exportsMap).map(specifierOf).sort(),
    );
  });

  // After `npm run build`: each subpath resolves through package.json the way a user's import does (the package
  // importing itself by name), to built files that load.
  it.skipIf(!existsSync(join(root, 'dist', 'index.js')))(
    'resolve to built files that load, once built',
    { timeout: 60_000 },
    () => {
      for (const target of Object.values(exportsMap)) {
        expect(existsSync(join(root, target.types)), `${target.types}: run npm run build`).toBe(true);
        expect(existsSync(join(root, target.default)), `${target.default}: run npm run build`).toBe(true);
      }
      // Each entry's optional peer dependencies are dev dependencies here, so every entry loads.
      const script = `
        const counts = {};
        for (const specifier of ${JSON.stringify(Object.keys(exportsMap).map(specifierOf))})
          counts[specifier] = Object.keys(await import(specifier)).length;
        console.log(JSON.stringify(counts));`;
      const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: root,
        encoding: 'utf8',
      });
      const counts = JSON.parse(output) as Record<string, number>;
      for (const subpath of Object.keys(exportsMap))
        expect(counts[specifierOf(subpath)], subpath).toBeGreaterThan(0);
    },
  );
});
