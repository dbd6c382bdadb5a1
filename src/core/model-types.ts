/** Types shared by the model seam, the tools and the ledger: what a model call asks for and reports. */

/** A tool call the model asked for. `args` is whatever the model sent; tools validate it. */
export interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly args: unknown;
}

/** What the model sees of a tool: its name, description and the JSON Schema of its input. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** Token counts reported by a provider. */
export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}
