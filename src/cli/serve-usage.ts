/** The `serve` command's help (apart from serve-command.ts, so other commands do not load the HTTP server). */
export const serveUsage = `  serve                serve a runtime over HTTP (JSON + SSE + the AI SDK UI message stream) until SIGTERM
                       --config PATH (./agentlanes.config.ts: .js, .mjs, or .ts/.mts with tsx installed;
                       default-exports the runtime options, an optional \`server\` export holds the server options;
                       examples/agentlanes.config.ts is one)  --port N (8787; 0 picks one)
                       --host HOST (127.0.0.1; 0.0.0.0 listens on every interface)
                       tokens: the config's server.auth, else AGENTLANES_TOKENS
`;
