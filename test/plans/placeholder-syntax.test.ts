import { describe, expect, it } from 'vitest';
import { formatPath, formatRef, parseTemplate } from '../../src/plans/placeholder-syntax.js';

const known =
  (...ids: string[]) =>
  (id: string) =>
    ids.includes(id);

describe('parseTemplate', () => {
  it('reads a short placeholder with keys, indices, .* and [*] when they follow the id', () => {
    const parts = parseTemplate('$step-1.items[0].tags.*.name[*]', known('step-1'));
    expect(parts).toEqual([
      {
        kind: 'ref',
        raw: '$step-1.items[0].tags.*.name[*]',
        ref: {
          raw: '$step-1.items[0].tags.*.name[*]',
          form: 'short',
          stepId: 'step-1',
          path: [
            { kind: 'key', key: 'items' },
            { kind: 'index', index: 0 },
            { kind: 'key', key: 'tags' },
            { kind: 'map' },
            { kind: 'key', key: 'name' },
            { kind: 'expand' },
          ],
          expands: true,
        },
      },
    ]);
  });

  it('reads ${step[N]…} as a plan index when the braces start with step[N]', () => {
    const [part] = parseTemplate('${step[0].data[0].id}', known());
    expect(part).toMatchObject({
      kind: 'ref',
      ref: {
        form: 'braced',
        stepIndex: 0,
        path: [
          { kind: 'key', key: 'data' },
          { kind: 'index', index: 0 },
          { kind: 'key', key: 'id' },
        ],
      },
    });
    expect(part?.kind === 'ref' && 'stepId' in part.ref).toBe(false);
  });

  it('reads ${id…} by id when the braces start with a step id, known or not', () => {
    const [part] = parseTemplate('${fetch.success}', known());
    expect(part).toMatchObject({ kind: 'ref', ref: { form: 'braced', stepId: 'fetch' } });
  });

  it('stops the path at text that is not a segment when the placeholder is embedded', () => {
    const parts = parseTemplate('Order $step-1.id shipped. Total $step-1.total.', known('step-1'));
    expect(parts.map((part) => part.raw)).toEqual([
      'Order ',
      '$step-1.id',
      ' shipped. Total ',
      '$step-1.total',
      '.',
    ]);
  });

  it('keeps $<id> as text when the whole run of id characters is not a step id', () => {
    expect(parseTemplate('costs $5', known('step-1'))).toEqual([
      { kind: 'text', raw: 'costs $5', text: 'costs $5' },
    ]);
    expect(parseTemplate('$step-1-x', known('step-1'))).toEqual([
      { kind: 'text', raw: '$step-1-x', text: '$step-1-x' },
    ]);
  });

  it('reads $$ as a literal $ when it is doubled, even before a step id', () => {
    expect(parseTemplate('$$step-1 costs $$5 $', known('step-1'))).toEqual([
      { kind: 'text', raw: '$$step-1 costs $$5 $', text: '$step-1 costs $5 $' },
    ]);
  });

  it('reports a malformed part when braces are unclosed, empty or hold a bad path', () => {
    expect(parseTemplate('a ${step-1.x', known())).toEqual([
      { kind: 'text', raw: 'a ', text: 'a ' },
      { kind: 'malformed', raw: '${step-1.x', reason: 'missing "}"' },
    ]);
    expect(parseTemplate('${}', known())[0]).toMatchObject({ kind: 'malformed', raw: '${}' });
    expect(parseTemplate('${a.b c} tail', known())[0]).toMatchObject({
      kind: 'malformed',
      raw: '${a.b c}',
      reason: 'unexpected " c" in placeholder path',
    });
  });

  it('keeps a bracket that is not an index as text when it follows a short placeholder', () => {
    expect(parseTemplate('$a[note]', known('a')).map((part) => part.raw)).toEqual(['$a', '[note]']);
  });
});

describe('formatRef', () => {
  it('writes each form back as it was parsed when given a parsed ref', () => {
    for (const raw of ['$a.b[2].*.c[*]', '${step[3].data.x}', '${a-0.error.message}', '$a']) {
      const [part] = parseTemplate(raw, known('a'));
      expect(part?.kind === 'ref' && formatRef(part.ref)).toBe(raw);
    }
  });
});

describe('formatPath', () => {
  it('writes an empty string when the path is empty', () => {
    expect(formatPath([])).toBe('');
  });
});
