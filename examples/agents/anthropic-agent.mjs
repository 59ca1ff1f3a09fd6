// The travel desk agent on the real `@anthropic-ai/sdk` (Messages with tool_use), streaming
// with `--stream` or AGENT_STREAM=1. Prints the final answer on stdout. Env: see examples/README.md.
import Anthropic from '@anthropic-ai/sdk';
import { completerOf, runAnthropicTurns } from './anthropic-loop.mjs';

const client = new Anthropic({
  baseURL: process.env.ANTHROPIC_BASE_URL,
  apiKey: process.env.ANTHROPIC_API_KEY ?? 'fake-key',
  maxRetries: 0,
});
await runAnthropicTurns(await completerOf(client, process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-4-5'));
