// A weather agent on the OpenAI Agents SDK (`@openai/agents`): an Agent with one function tool,
// run() over the Responses API (the SDK's default), unchanged by tapedeck.
//   node openai-agents-agent.mjs            run(agent, input)
//   node openai-agents-agent.mjs --stream   run(agent, input, { stream: true })
// Env: OPENAI_BASE_URL, OPENAI_API_KEY, WEATHER_URL. Tracing export is off (no OpenAI platform here).
// Prints `FINAL: <finalOutput>`.
import { Agent, run, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';

setTracingDisabled(true);

const getForecast = tool({
  name: 'get_forecast',
  description: 'The weather forecast for a city.',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => {
    const res = await fetch(`${process.env.WEATHER_URL}/forecast?city=${encodeURIComponent(city)}`);
    return JSON.stringify(await res.json());
  },
});

const agent = new Agent({
  name: 'Weather desk',
  instructions: 'You are a weather desk. Use get_forecast before answering.',
  model: 'fake-gpt-1',
  tools: [getForecast],
});

const input = 'What is the weather in Oslo today?';
if (process.argv.includes('--stream')) {
  const result = await run(agent, input, { stream: true });
  let text = '';
  for await (const delta of result.toTextStream()) text += delta;
  await result.completed;
  process.stdout.write(`STREAMED: ${text}\nFINAL: ${result.finalOutput}\n`);
} else {
  const result = await run(agent, input);
  process.stdout.write(`FINAL: ${result.finalOutput}\n`);
}
