// A weather agent on LangChain JS (`@langchain/openai` ChatOpenAI with a bound tool), unchanged by
// tapedeck; its tool calls the weather API with axios and stamps the time and a random draw.
//   node langchain-agent.mjs            ChatOpenAI.invoke in a loop, the tool run by the agent
// Env: OPENAI_BASE_URL (e.g. http://127.0.0.1:PORT/v1), OPENAI_API_KEY, WEATHER_URL, SYSTEM_PROMPT.
// Prints the final text as `FINAL: <text>` and the usage LangChain saw as `USAGE: <json>`.
import { HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import axios from 'axios';
import { z } from 'zod';

const getForecast = tool(
  async ({ city }) => {
    const res = await axios.get(`${process.env.WEATHER_URL}/forecast`, { params: { city } });
    return JSON.stringify({ ...res.data, checkedAt: new Date().toISOString(), draw: Math.random() });
  },
  { name: 'get_forecast', description: 'The weather forecast for a city.', schema: z.object({ city: z.string() }) },
);

const model = new ChatOpenAI({
  model: 'fake-gpt-1',
  apiKey: process.env.OPENAI_API_KEY ?? 'fake-key',
  configuration: { baseURL: process.env.OPENAI_BASE_URL },
  maxRetries: 0,
}).bindTools([getForecast]);

const messages = [
  new SystemMessage(process.env.SYSTEM_PROMPT ?? 'You are a weather desk. Use get_forecast before answering.'),
  new HumanMessage('What is the weather in Paris today?'),
];
const usage = [];
for (let turn = 0; turn < 4; turn++) {
  const answer = await model.invoke(messages);
  usage.push(answer.usage_metadata ?? null);
  messages.push(answer);
  if (!answer.tool_calls?.length) {
    process.stdout.write(`FINAL: ${answer.content}\nUSAGE: ${JSON.stringify(usage)}\n`);
    break;
  }
  for (const call of answer.tool_calls) {
    messages.push(new ToolMessage({ tool_call_id: call.id ?? '', content: await getForecast.invoke(call.args) }));
  }
}
