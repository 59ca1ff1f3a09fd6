// The travel desk agent on the real `@google/genai` SDK (Gemini `generateContent` with function
// declarations, or `generateContentStream` with `--stream` / AGENT_STREAM=1): the system prompt is
// `systemInstruction`, tool calls come back as `functionCall` parts and go out as
// `functionResponse` parts; thought summaries are asked for and not printed. Prints the final
// answer on stdout. Env: GEMINI_BASE_URL, GEMINI_API_KEY, GEMINI_MODEL; the rest as examples/README.md.
import { GoogleGenAI } from '@google/genai';
import { config, jsonSchema, MAX_TURNS, runTool, systemPrompt, TOOLS, trace, userMessage } from './tools.mjs';

const ai = new GoogleGenAI({
  apiKey: process.env.GEMINI_API_KEY ?? 'fake-key',
  ...(process.env.GEMINI_BASE_URL ? { httpOptions: { baseUrl: process.env.GEMINI_BASE_URL } } : {}),
});
const model = process.env.GEMINI_MODEL ?? 'gemini-2.5-flash';
const generationConfig = {
  systemInstruction: await systemPrompt(),
  tools: [
    {
      functionDeclarations: TOOLS.map((t) => ({
        name: t.name,
        description: t.description,
        parametersJsonSchema: jsonSchema(t),
      })),
    },
  ],
  thinkingConfig: { includeThoughts: true },
};

/** The model's turn: its content (role `model`, parts), streamed chunks joined in order. */
async function generate(contents) {
  const request = { model, contents, config: generationConfig };
  if (!config.stream) return (await ai.models.generateContent(request)).candidates?.[0]?.content;
  const parts = [];
  for await (const chunk of await ai.models.generateContentStream(request)) {
    for (const part of chunk.candidates?.[0]?.content?.parts ?? []) {
      const last = parts.at(-1);
      // Text arrives in pieces: consecutive pieces of the same kind are one part.
      if (typeof part.text === 'string' && typeof last?.text === 'string' && !!last.thought === !!part.thought)
        last.text += part.text;
      else parts.push({ ...part });
    }
  }
  return { role: 'model', parts };
}

const contents = [{ role: 'user', parts: [{ text: userMessage() }] }];
let answered = false;
for (let turn = 1; turn <= MAX_TURNS && !answered; turn++) {
  const content = await generate(contents);
  const parts = content?.parts ?? [];
  // The model's turn goes back as it came, without its thought summaries.
  contents.push({ role: 'model', parts: parts.filter((part) => !part.thought) });
  const calls = parts.filter((part) => part.functionCall);
  if (calls.length === 0) {
    const text = parts
      .filter((part) => typeof part.text === 'string' && !part.thought)
      .map((part) => part.text)
      .join('');
    process.stdout.write(`${text}\n`);
    answered = true;
    break;
  }
  const responses = [];
  for (const { functionCall } of calls) {
    trace(`${functionCall.name} ${JSON.stringify(functionCall.args ?? {})}`);
    const output = await runTool(functionCall.name, functionCall.args ?? {});
    responses.push({ functionResponse: { name: functionCall.name, response: { output } } });
  }
  contents.push({ role: 'user', parts: responses });
}
if (!answered) {
  process.stderr.write(`gave up after ${MAX_TURNS} turns\n`);
  process.exitCode = 1;
}
