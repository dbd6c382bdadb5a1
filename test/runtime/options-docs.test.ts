import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// RuntimeOptions and the option interfaces it reaches, split over a few files (each under 300 lines).
const optionFiles = [
  '../../src/runtime/runtime-options.ts',
  '../../src/runtime/runtime-ledger-options.ts',
  '../../src/actors/attachment-options.ts',
].map((path) => new URL(path, import.meta.url));

function optionSources(): ts.SourceFile[] {
  return optionFiles.map((url) =>
    ts.createSourceFile(url.pathname, readFileSync(url, 'utf8'), ts.ScriptTarget.ES2022, true),
  );
}

/** One property of an option interface, with what its TSDoc says. */
interface DocumentedProperty {
  readonly path: string;
  readonly optional: boolean;
  readonly summary: string;
  readonly hasDefault: boolean;
}

function docOf(node: ts.Node): { summary: string; hasDefault: boolean } {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  const summary = docs.map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? '').join(' ');
  const hasDefault = docs.some((doc) => (doc.tags ?? []).some((tag) => tag.tagName.text === 'default'));
  return { summary: summary.trim(), hasDefault };
}

/** Every property signature in the file: of each interface, and of any type literal nested in one. */
function propertiesOf(source: ts.SourceFile): Map<string, DocumentedProperty[]> {
  const byInterface = new Map<string, DocumentedProperty[]>();
  const collect = (owner: string, members: ts.NodeArray<ts.TypeElement>): DocumentedProperty[] =>
    members.filter(ts.isPropertySignature).flatMap((member) => {
      const path = `${owner}.${member.name.getText(source)}`;
      const own = { path, optional: member.questionToken !== undefined, ...docOf(member) };
      const nested: DocumentedProperty[] = [];
      const visit = (node: ts.Node): void => {
        if (ts.isTypeLiteralNode(node)) nested.push(...collect(path, node.members));
        else ts.forEachChild(node, visit);
      };
      if (member.type !== undefined) visit(member.type);
      return [own, ...nested];
    });
  for (const statement of source.statements) {
    if (ts.isInterfaceDeclaration(statement)) {
      byInterface.set(statement.name.text, collect(statement.name.text, statement.members));
    }
  }
  return byInterface;
}

function readOptions(): Map<string, DocumentedProperty[]> {
  return new Map(optionSources().flatMap((source) => [...propertiesOf(source)]));
}

describe('the RuntimeOptions interface', () => {
  it('is a hand-written interface when read from its source', () => {
    const interfaces = readOptions();
    const names = (interfaces.get('RuntimeOptions') ?? []).map((property) => property.path);
    expect(names).toEqual(expect.arrayContaining(['RuntimeOptions.providers', 'RuntimeOptions.model']));
    expect(names.length).toBeGreaterThan(20);
  });

  it('gives every option a TSDoc summary when the option is declared, nested ones included', () => {
    const undocumented = [...readOptions().values()]
      .flat()
      .filter((property) => property.summary.length === 0)
      .map((property) => property.path);
    expect(undocumented).toEqual([]);
  });

  it('gives every optional option a @default when it may be left out', () => {
    const withoutDefault = [...readOptions().values()]
      .flat()
      .filter((property) => property.optional && !property.hasDefault)
      .map((property) => property.path);
    expect(withoutDefault).toEqual([]);
  });

  it('reaches every nested option interface from RuntimeOptions when the types are followed', () => {
    const interfaces = readOptions();
    const reached = new Set<string>(['RuntimeOptions']);
    const pending = ['RuntimeOptions'];
    const declarations = new Map(
      optionSources().flatMap((source) =>
        source.statements.filter(ts.isInterfaceDeclaration).map((node) => [node.name.text, node] as const),
      ),
    );
    for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
      const visit = (node: ts.Node): void => {
        if (ts.isIdentifier(node) && declarations.has(node.text) && !reached.has(node.text)) {
          reached.add(node.text);
          pending.push(node.text);
        }
        ts.forEachChild(node, visit);
      };
      const declaration = declarations.get(name);
      if (declaration !== undefined) ts.forEachChild(declaration, visit);
    }
    // Every option interface in these files is part of RuntimeOptions, so the checks above cover all of them.
    expect([...interfaces.keys()].filter((name) => !reached.has(name))).toEqual([]);
  });
});
