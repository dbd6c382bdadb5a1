/** A cell of a markdown table: JSON for non-strings, pipes escaped, newlines flattened, long values cut. */
function cell(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  const flat = text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
  return flat.length > 200 ? `${flat.slice(0, 197)}...` : flat;
}

/**
 * The markdown table a step's resolved inputs are shown as before it runs (so a chat UI shows what is about to
 * happen): a title line with the step and tool, then one row per argument.
 */
export function inputTable(stepId: string, tool: string, args: Readonly<Record<string, unknown>>): string {
  const rows = Object.entries(args).map(([name, value]) => `| ${cell(name)} | ${cell(value)} |`);
  const body = rows.length === 0 ? ['| (none) | |'] : rows;
  return [`**${stepId}** \`${tool}\``, '', '| input | value |', '| --- | --- |', ...body, ''].join('\n');
}
