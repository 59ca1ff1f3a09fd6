// A weather agent on the Vercel AI SDK (`ai` + `@ai-sdk/openai`), unchanged by tapedeck.
//   node ai-sdk-agent.mjs generate   generateText with a tool over Chat Completions (provider.chat)
//   node ai-sdk-agent.mjs stream     streamText with the same tool over the Responses API (provider.responses)
// Env: OPENAI_BASE_URL (e.g. http://127.0.0.1:PORT/v1), OPENAI_API_KEY, WEATHER_URL.
// Prints the final text as `FINAL: <text>` and the SDK's total usage as `USAGE: <json>`.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';

const provider = createOpenAI({
  baseURL: process.env.OPENAI_BASE_URL,
  apiKey: process.env.OPENAI_API_KEY ?? 'fake-key',
});
const mode = process.argv[2] ?? 'generate';

const tools = {
  get_forecast: tool({
    description: 'The weather forecast for a city.',
    inputSchema: z.object({ city: z.string().describe('city name') }),
    execute: async ({ city }) => {
      const res = await fetch(`${process.env.WEATHER_URL}/forecast?city=${encodeURIComponent(city)}`);
      // A clock read after a network call: the replay must hand back the very same instant.
      return { ...(await res.json()), checkedAt: new Date().toISOString() };
    },
  }),
};
const common = {
  system: 'You are a weather desk. Use get_forecast before answering.',
  prompt: 'What is the weather in Paris today?',
  tools,
  stopWhen: stepCountIs(4),
  maxRetries: 0,
};

if (mode === 'generate') {
  const result = await generateText({ model: provider.chat('fake-gpt-1'), ...common });
  process.stdout.write(`FINAL: ${result.text}\nUSAGE: ${JSON.stringify(result.totalUsage)}\n`);
} else {
  const result = streamText({ model: provider.responses('fake-gpt-1'), ...common });
  let text = '';
  for await (const delta of result.textStream) text += delta;
  process.stdout.write(`FINAL: ${text}\nUSAGE: ${JSON.stringify(await result.totalUsage)}\n`);
}
