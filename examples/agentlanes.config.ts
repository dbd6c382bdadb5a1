/**
 * A config for `agentlanes serve`: the default export is the runtime options; an optional `server` export holds
 * the server's (without one, the bearer tokens come from AGENTLANES_TOKENS, comma-separated).
 *
 *   AGENTLANES_TOKENS=$OPERATOR_TOKEN npx agentlanes serve --config examples/agentlanes.config.ts --port 8787
 *
 * With OPENAI_API_KEY set it answers with gpt-4o-mini; without, a scripted model echoes (no key needed). The ledger
 * is the SQLite file AGENTLANES_DB names, ./agentlanes.db by default.
 */
import { defineTool, RuntimeError, type ModelProvider, type RuntimeOptions } from 'agentlanes';
import { scriptedModel } from 'agentlanes/testing';
import { z } from 'zod';

/** `agentlanes/openai`, loaded only when a key asks for it: `openai` is an optional peer dependency. */
async function openaiProvider(): Promise<ModelProvider> {
  try {
    const openai = await import('agentlanes/openai');
    return openai.openaiProvider({ baseURL: 'https://api.openai.com/v1' });
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new RuntimeError(
      'invalid_input',
      'OPENAI_API_KEY is set but the openai package is not installed: run `npm install openai`',
    );
  }
}

const model: Pick<RuntimeOptions, 'providers' | 'model' | 'authProfiles'> = !process.env.OPENAI_API_KEY
  ? {
      providers: {
        scripted: scriptedModel((request) => ({
          text: `You said: ${String(request.messages.at(-1)?.content)} (set OPENAI_API_KEY for real answers)`,
        })),
      },
      model: { provider: 'scripted', model: 'echo' },
    }
  : {
      providers: { openai: await openaiProvider() },
      model: { provider: 'openai', model: 'gpt-4o-mini' },
      authProfiles: [{ id: 'oa-1', provider: 'openai', type: 'api_key', secret: { env: 'OPENAI_API_KEY' } }],
    };

/** A tool the model may call: tools are code, which is why the config is a module and not JSON. */
const currentTime = defineTool({
  name: 'current_time',
  description: 'The current date and time on the server, as an ISO 8601 string.',
  input: z.object({}),
  execute: () => ({ now: new Date().toISOString() }),
});

const options: RuntimeOptions = {
  ledger: { path: process.env.AGENTLANES_DB ?? './agentlanes.db' },
  ...model,
  tools: [currentTime],
  queue: { mode: 'collect', debounceMs: 500 },
  systemPrompt: 'You are a helpful assistant. Answer briefly.',
};

export default options;
