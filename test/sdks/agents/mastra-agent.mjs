// A weather desk on Mastra (`@mastra/core` Agent + createTool), unchanged by tapedeck. Its model is
// Mastra's own OpenAI-compatible router pointed at OPENAI_BASE_URL; it streams (Agent.stream, the
// default way a Mastra agent answers). Two tools: get_forecast calls the weather API with fetch and
// stamps the time and a random draw; save_note reads the desk's notes file and appends a line.
// Env: OPENAI_BASE_URL (…/v1), OPENAI_API_KEY, WEATHER_URL, NOTES_DIR, SYSTEM_PROMPT; `--generate`
// answers with Agent.generate instead of streaming.
// Prints the final text as `FINAL: <text>` and the steps Mastra saw as `STEPS: <n>`.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { z } from 'zod';

const getForecast = createTool({
  id: 'get_forecast',
  description: 'The weather forecast for a city.',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ context }) => {
    const res = await fetch(`${process.env.WEATHER_URL}/forecast?city=${encodeURIComponent(context.city)}`);
    return { ...(await res.json()), checkedAt: new Date().toISOString(), draw: Math.random() };
  },
});

const notesFile = path.join(process.env.NOTES_DIR ?? '.', 'notes.txt');
const saveNote = createTool({
  id: 'save_note',
  description: "Append a line to the desk's notes.",
  inputSchema: z.object({ note: z.string() }),
  execute: async ({ context }) => {
    const before = await readFile(notesFile, 'utf8').catch(() => '');
    const lines = before.split('\n').filter(Boolean).length;
    await writeFile(notesFile, `${before}${context.note}\n`);
    return { saved: true, line: lines + 1 };
  },
});

const agent = new Agent({
  name: 'weather-desk',
  instructions: process.env.SYSTEM_PROMPT ?? 'You are a weather desk. Use get_forecast, then save_note, then answer.',
  model: {
    id: 'openai/fake-gpt-1',
    url: process.env.OPENAI_BASE_URL,
    apiKey: process.env.OPENAI_API_KEY ?? 'fake-key',
  },
  tools: { get_forecast: getForecast, save_note: saveNote },
});

const question = 'What is the weather in Paris today? Note it down.';
if (process.argv.includes('--generate')) {
  const result = await agent.generate(question, { maxSteps: 5 });
  process.stdout.write(`FINAL: ${result.text}\nSTEPS: ${result.steps.length}\n`);
} else {
  const stream = await agent.stream(question, { maxSteps: 5 });
  let text = '';
  for await (const chunk of stream.textStream) text += chunk;
  process.stdout.write(`FINAL: ${text}\nSTEPS: ${(await stream.steps).length}\n`);
}
