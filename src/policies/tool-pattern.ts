import { RuntimeError } from '../core/index.js';

/** A named list of tool names or globs, referred to from a policy as `group:<name>`. */
export type ToolGroups = Readonly<Record<string, readonly string[]>>;

/** A compiled tool pattern: true when the tool name matches. */
export type ToolMatcher = (name: string) => boolean;

const groupPrefix = 'group:';

/** Compile one name or glob (`*`, or `prefix*` with the only `*` at the end); anything else throws. */
export function compileToolGlob(pattern: string): ToolMatcher {
  if (pattern === '') throw new RuntimeError('invalid_input', 'a tool pattern must not be empty');
  if (pattern.startsWith(groupPrefix))
    throw new RuntimeError('invalid_input', `tool groups are not allowed here: "${pattern}"`, {
      details: { pattern },
    });
  const star = pattern.indexOf('*');
  if (star === -1) return (name) => name === pattern;
  // A star elsewhere would look like a glob and silently match nothing, so refuse it.
  if (star !== pattern.length - 1)
    throw new RuntimeError('invalid_input', `only a trailing "*" is supported in tool pattern "${pattern}"`, {
      details: { pattern },
    });
  const prefix = pattern.slice(0, -1);
  return (name) => name.startsWith(prefix);
}

/** Compile a list of names, globs and `group:<name>` entries into one matcher; unknown groups throw. */
export function compileToolPatterns(patterns: readonly string[], groups: ToolGroups = {}): ToolMatcher {
  const matchers = patterns.flatMap((pattern) => {
    if (!pattern.startsWith(groupPrefix)) return [compileToolGlob(pattern)];
    const groupName = pattern.slice(groupPrefix.length);
    const members = Object.hasOwn(groups, groupName) ? groups[groupName] : undefined;
    if (members === undefined)
      throw new RuntimeError('invalid_input', `unknown tool group "${groupName}"`, {
        details: { group: groupName },
      });
    // Group members are names or globs; nesting groups is refused by compileToolGlob.
    return members.map(compileToolGlob);
  });
  return (name) => matchers.some((matches) => matches(name));
}
