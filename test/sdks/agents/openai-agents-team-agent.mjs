// A two-agent desk on the OpenAI Agents SDK (`@openai/agents`): a front desk whose only tool is
// another agent (`forecaster.asTool`), the forecaster with its own instructions and a function
// tool. Each agent has its own system prompt; the forecaster's model calls run inside the front
// desk's tool call. With --handoff the desk hands the conversation off to the forecaster instead
// (`handoffs`), which then answers the guest itself. Unchanged by tapedeck.
//   node openai-agents-team-agent.mjs [--stream] [--handoff]
// Env: OPENAI_BASE_URL, OPENAI_API_KEY, WEATHER_URL. Prints `FINAL: <finalOutput>`.
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

const forecaster = new Agent({
  name: 'Forecaster',
  instructions: 'You are the forecaster. Call get_forecast and report the sky in one line.',
  model: 'fake-gpt-1',
  tools: [getForecast],
});

const desk = process.argv.includes('--handoff')
  ? new Agent({
      name: 'Front desk',
      instructions: 'You are the front desk. Hand weather questions to the forecaster.',
      model: 'fake-gpt-1',
      handoffs: [forecaster],
    })
  : new Agent({
      name: 'Front desk',
      instructions: 'You are the front desk. Ask the forecaster, then answer the guest politely.',
      model: 'fake-gpt-1',
      tools: [forecaster.asTool({ toolName: 'ask_forecaster', toolDescription: 'Ask the forecaster about a city.' })],
    });

const input = 'What is the weather in Oslo today?';
const result = process.argv.includes('--stream') ? await run(desk, input, { stream: true }) : await run(desk, input);
if (process.argv.includes('--stream')) {
  for await (const _ of result.toTextStream()) {
    // drain
  }
  await result.completed;
}
process.stdout.write(`FINAL: ${result.finalOutput}\n`);
