// The travel desk agent on the real `openai` SDK (Chat Completions with tools), streaming with
// `--stream` or AGENT_STREAM=1. Prints the final answer on stdout. Env: see examples/README.md.
import { runOpenAiAgent } from './openai-loop.mjs';
import { config, MAX_TURNS, runTool, systemPrompt, TOOLS, trace, userMessage } from './tools.mjs';

await runOpenAiAgent({
  tools: TOOLS,
  runTool,
  system: await systemPrompt(),
  user: userMessage(),
  stream: config.stream,
  trace,
  maxTurns: MAX_TURNS,
});
