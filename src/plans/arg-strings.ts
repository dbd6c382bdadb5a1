function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Copy a JSON-like value, replacing every string at any depth by `replace(string)`; the input is untouched. */
export function mapStrings(value: unknown, replace: (text: string) => unknown): unknown {
  if (typeof value === 'string') return replace(value);
  if (Array.isArray(value)) return value.map((element: unknown) => mapStrings(element, replace));
  if (!isPlainObject(value)) return value;
  // fromEntries defines own properties, so a `__proto__` key stays a plain key.
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, mapStrings(entry, replace)]));
}

/** `mapStrings` over a step's args record. */
export function mapArgStrings(
  args: Readonly<Record<string, unknown>>,
  replace: (text: string) => unknown,
): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).map(([key, value]) => [key, mapStrings(value, replace)]));
}

/** Call `visit` on every string inside a JSON-like value, depth first, in key order. */
export function forEachString(value: unknown, visit: (text: string) => void): void {
  if (typeof value === 'string') visit(value);
  else if (Array.isArray(value)) for (const element of value as unknown[]) forEachString(element, visit);
  else if (isPlainObject(value)) for (const entry of Object.values(value)) forEachString(entry, visit);
}
