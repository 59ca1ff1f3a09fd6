// A weather desk on LlamaIndex.TS, unchanged by tapedeck: a FunctionAgent (`agent()` from
// @llamaindex/workflow, the agent workflow API) over `@llamaindex/openai`'s OpenAI LLM pointed at
// OPENAI_BASE_URL. The FunctionAgent streams its chat calls. Two tools: get_forecast calls the
// weather API with fetch and stamps the time and a random draw; log_reading writes the reading as a
// row of desk.readings in Postgres (pg) and counts the rows.
// Env: OPENAI_BASE_URL (…/v1), OPENAI_API_KEY, WEATHER_URL, DATABASE_URL, SYSTEM_PROMPT.
// `--chat` makes one plain (not streamed) llm.chat call with the tools instead of running the agent.
// Prints the final text as `FINAL: <text>`.
import { OpenAI } from '@llamaindex/openai';
import { agent } from '@llamaindex/workflow';
import { tool } from 'llamaindex';
import pg from 'pg';
import { z } from 'zod';

const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
await db.connect();

const getForecast = tool({
  name: 'get_forecast',
  description: 'The weather forecast for a city.',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => {
    const res = await fetch(`${process.env.WEATHER_URL}/forecast?city=${encodeURIComponent(city)}`);
    return JSON.stringify({ ...(await res.json()), checkedAt: new Date().toISOString(), draw: Math.random() });
  },
});

const logReading = tool({
  name: 'log_reading',
  description: 'Log a temperature reading for a city in the desk database.',
  parameters: z.object({ city: z.string(), tempC: z.number() }),
  execute: async ({ city, tempC }) => {
    await db.query('INSERT INTO desk.readings (city, temp_c) VALUES ($1, $2)', [city, tempC]);
    const { rows } = await db.query('SELECT count(*)::int AS n FROM desk.readings WHERE city = $1', [city]);
    return JSON.stringify({ logged: true, readings: rows[0].n });
  },
});

const llm = new OpenAI({
  model: 'gpt-4o-mini',
  apiKey: process.env.OPENAI_API_KEY ?? 'fake-key',
  baseURL: process.env.OPENAI_BASE_URL,
  maxRetries: 0,
});
const systemPrompt =
  process.env.SYSTEM_PROMPT ?? 'You are a weather desk. Use get_forecast, then log_reading, then answer.';
const question = 'What is the weather in Paris today? Log the reading.';

try {
  if (process.argv.includes('--chat')) {
    const answer = await llm.chat({
      messages: [
        { role: 'system', content: systemPrompt },
        { role: 'user', content: question },
      ],
      tools: [getForecast, logReading],
    });
    process.stdout.write(`FINAL: ${JSON.stringify(answer.message.options?.toolCall ?? answer.message.content)}\n`);
  } else {
    const desk = agent({ name: 'weather-desk', llm, tools: [getForecast, logReading], systemPrompt });
    const result = await desk.run(question);
    process.stdout.write(`FINAL: ${result.data.result}\n`);
  }
} finally {
  await db.end();
}
