import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pieceCodec } from '../../src/core/piece-codec.js';
import { expandBody, shortenBody } from '../../src/ledger/sql/body-pieces.js';

describe('pieceCodec', () => {
  const codec = pieceCodec(['{"a":', ',"b":"', '"ab"'], 1);

  it('shortens each piece to one control character after the reserved ones, longest piece first', () => {
    expect(codec.shorten('{"a":"ab","b":"x"}')).toBe('\u0002\u0004\u0003x"}');
    expect(codec.shorten('{"a":1,"b":"x"}')).toBe('\u00021\u0003x"}');
    expect(codec.expand('\u00021\u0003x"}')).toBe('{"a":1,"b":"x"}');
  });

  it('gives back exactly the JSON it shortened, whatever the JSON holds', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const json = JSON.stringify(value);
        expect(codec.expand(codec.shorten(json))).toBe(json);
        expect(expandBody(shortenBody(json))).toBe(json);
      }),
    );
  });

  it('leaves text with no control character as it is (plain JSON from an older file, or Postgres)', () => {
    const json = '{"messageId":"m1","text":"hi","mode":"followup","disposition":"started"}';
    expect(expandBody(json)).toBe(json);
    expect(shortenBody(json).length).toBeLessThan(json.length / 2);
  });

  it('refuses more pieces than there are codes', () => {
    expect(() => pieceCodec(Array.from({ length: 31 }, (_, index) => `p${index}`))).toThrow(RangeError);
  });
});
