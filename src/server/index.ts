export { createServer, type AgentlanesServer } from './create-server.js';
export type { ListenOptions, ListeningServer } from './listen.js';
export { tokensEnvironmentVariable, type ServerOptions, type ServerToken } from './server-options.js';
export type { ServerEnv } from './server-env.js';
export { httpErrorCodes, type HttpErrorCode, type ErrorBody } from './http-errors.js';
export type { UiMessageChunk } from './ui-message-chunks.js';
export { capabilities, requireCapability, type Capability, type Grant } from './capabilities.js';
