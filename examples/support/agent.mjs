// The support desk agent on the real `openai` SDK (Chat Completions with tools), streaming with
// `--stream` or AGENT_STREAM=1. Prints the final answer on stdout. Env: see examples/support/README.md.
import { runOpenAiAgent } from '../agents/openai-loop.mjs';
import { config, runTool, systemPrompt, TOOLS, trace } from './tools.mjs';

await runOpenAiAgent({
  tools: TOOLS,
  runTool,
  system: await systemPrompt(),
  user: config.task,
  stream: config.stream,
  trace,
  maxTurns: 12,
});
