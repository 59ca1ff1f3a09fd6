// The Google Gen AI SDK (`@google/genai` 1.x; 3.x needs Node 22), unchanged: the travel desk agent
// calls `models.generateContent` / `generateContentStream` (SSE, `alt=sse`) with function
// declarations and a `systemInstruction`, asks for thought summaries, and hands tool results back
// as `functionResponse` parts. Recorded, decoded (cached and thinking tokens), replayed exactly,
// replayed with the fixed prompt (rewritten in `systemInstruction`), costed and bisected.
import { travelDeskSuite } from './travel-desk.js';

travelDeskSuite({
  agent: 'gemini',
  sdk: '@google/genai',
  provider: 'google',
  api: 'generateContent',
  model: 'gemini-2.5-flash',
  liveStream: true,
  promptIn: (request) => {
    const instruction = request.systemInstruction as { parts?: Array<{ text?: string }> } | undefined;
    return instruction?.parts?.map((p) => p.text).join('');
  },
});
