/**
 * A reversible shortening of JSON text: each frequent piece in a fixed list is replaced by one control character.
 * JSON.stringify escapes every character below U+0020, so none of them occurs in its output, and expanding undoes
 * the replacement exactly whatever the JSON holds: text of another shape is only less shortened, and text with no
 * control character (plain JSON, as older builds wrote) expands to itself. The line feed (U+000A) is never a code,
 * so a caller may join shortened texts with it.
 */
export interface PieceCodec {
  shorten(json: string): string;
  expand(text: string): string;
}

/** The control characters a codec may use: U+0001..U+001F without the line feed. */
const allCodes = Array.from({ length: 31 }, (_, index) => String.fromCharCode(index + 1)).filter(
  (code) => code !== '\n',
);

/**
 * The codec of `pieces` (in order, each a code; the order is part of the stored format: append, never reorder),
 * leaving the first `reserved` codes to the caller (which replaces and restores those itself).
 */
export function pieceCodec(pieces: readonly string[], reserved = 0): PieceCodec {
  const codes = allCodes.slice(reserved, reserved + pieces.length);
  if (codes.length < pieces.length) throw new RangeError(`at most ${allCodes.length - reserved} pieces`);
  const codeOf = new Map(pieces.map((piece, index) => [piece, codes[index] as string]));
  const pieceOf = new Map(codes.map((code, index) => [code, pieces[index] as string]));
  // The longest pieces first, so that a piece inside another is tried after it.
  const piecePattern = new RegExp(
    [...pieces]
      .sort((a, b) => b.length - a.length)
      .map((piece) => piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('|'),
    'g',
  );
  // eslint-disable-next-line no-control-regex -- the codes are control characters by design
  const codePattern = /[\u0001-\u0009\u000b-\u001f]/;
  const codesPattern = new RegExp(codePattern.source, 'g');
  return {
    shorten: (json) => json.replace(piecePattern, (piece) => codeOf.get(piece) ?? piece),
    expand: (text) =>
      codePattern.test(text) ? text.replace(codesPattern, (code) => pieceOf.get(code) ?? code) : text,
  };
}
