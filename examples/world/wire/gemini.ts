// Google Gemini (POST /v1beta/models/{model}:generateContent, and :streamGenerateContent?alt=sse),
// as the Gemini API answers: `candidates[0].content.parts` with text and `functionCall` parts
// (no call ids: results come back as `functionResponse` parts by name), `usageMetadata` with
// cached and thinking tokens, thought-summary parts when `thinkingConfig.includeThoughts` asks.
import type { Conversation, ToolCallSeen } from '../fake-policy.js';
import {
  type Meant,
  type Obj,
  outputText,
  prefixTokens,
  reasoningTokens,
  textOf,
  tokens,
  type Wire,
  wordPieces,
} from './shared.js';

const ROUTE = /^\/v1(?:alpha|beta)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

const partsOf = (content: unknown): Obj[] =>
  content !== null && typeof content === 'object' && Array.isArray((content as Obj).parts)
    ? ((content as Obj).parts as Obj[])
    : [];

function systemText(value: unknown): string {
  if (typeof value === 'string') return value;
  return textOf(partsOf(value).filter((p) => p.thought !== true));
}

/** A function response as the model reads it: its `output` text, else the response as JSON. */
function resultText(response: unknown): string {
  if (response !== null && typeof response === 'object' && typeof (response as Obj).output === 'string')
    return (response as Obj).output as string;
  return JSON.stringify(response ?? null);
}

function conversation(body: Obj): { conv: Conversation; hasHistory: boolean } {
  const contents = (Array.isArray(body.contents) ? body.contents : []) as Obj[];
  const userTexts: string[] = [];
  const calls: ToolCallSeen[] = [];
  for (const content of contents) {
    for (const part of partsOf(content)) {
      const call = part.functionCall as Obj | undefined;
      const response = part.functionResponse as Obj | undefined;
      if (call) {
        const name = String(call.name);
        const n = calls.filter((c) => c.name === name).length;
        calls.push({
          id: typeof call.id === 'string' ? call.id : `${name}#${n}`,
          name,
          args: (call.args ?? {}) as Obj,
        });
      } else if (response) {
        const target =
          calls.find((c) => typeof response.id === 'string' && c.id === response.id) ??
          calls.find((c) => c.name === response.name && c.result === undefined);
        if (target) target.result = resultText(response.response);
      } else if (content.role !== 'model' && typeof part.text === 'string') userTexts.push(part.text);
    }
  }
  const toolNames = ((body.tools ?? []) as Obj[]).flatMap((t) =>
    ((t.functionDeclarations ?? []) as Obj[]).map((d) => String(d.name)),
  );
  return {
    conv: { system: systemText(body.systemInstruction), userText: userTexts.join('\n'), calls, toolNames },
    hasHistory: contents.some((c) => c.role === 'model'),
  };
}

export const geminiWire: Wire = {
  api: 'gemini',
  route(path) {
    const m = ROUTE.exec(path);
    return m ? { stream: m[2] === 'streamGenerateContent' } : undefined;
  },
  reply(body, { hash, path, policy }) {
    const { conv, hasHistory } = conversation(body);
    const decision = policy(conv);
    const model = ROUTE.exec(path)?.[1] ?? 'fake-model';
    const thinking = ((body.generationConfig as Obj | undefined)?.thinkingConfig ?? {}) as Obj;
    const thought =
      thinking.includeThoughts === true
        ? decision.kind === 'final'
          ? 'Thinking: everything is done; summarising for the traveler.'
          : `Thinking: next I call ${decision.calls.map((c) => c.name).join(' and ')}.`
        : undefined;
    const text = decision.kind === 'final' ? decision.text : decision.say;
    const calls =
      decision.kind === 'tool_calls'
        ? decision.calls.map((c) => ({ functionCall: { name: c.name, args: c.args } }))
        : [];
    const prompt = tokens(
      JSON.stringify({ systemInstruction: body.systemInstruction, contents: body.contents, tools: body.tools ?? [] }),
    );
    // Fake implicit caching: the system instruction and tools, in 64-token blocks, once the
    // conversation has history. Thinking tokens are reported apart from the candidates' tokens.
    const cached = hasHistory
      ? Math.min(prompt, Math.floor(prefixTokens(body.systemInstruction, body.tools) / 64) * 64)
      : 0;
    const thoughts = reasoningTokens(decision);
    const candidates = tokens(outputText(decision));
    const usageMetadata = {
      promptTokenCount: prompt,
      candidatesTokenCount: candidates,
      totalTokenCount: prompt + candidates + thoughts,
      ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
      ...(cached > 0 ? { cacheTokensDetails: [{ modality: 'TEXT', tokenCount: cached }] } : {}),
      thoughtsTokenCount: thoughts,
    };
    const meant: Meant = {
      model,
      text,
      toolCalls: calls.map((c) => ({ name: c.functionCall.name, arguments: JSON.stringify(c.functionCall.args) })),
      usage: {
        inputUncached: prompt - cached,
        cacheRead: cached,
        cacheWrite: 0,
        output: candidates,
        reasoning: thoughts,
      },
    };
    const responseId = hash.slice(0, 22);
    const candidate = (parts: Obj[], last: boolean) => ({
      content: { parts, role: 'model' },
      ...(last ? { finishReason: 'STOP' } : {}),
      index: 0,
    });
    const parts: Obj[] = [...(thought ? [{ text: thought, thought: true }] : []), { text }, ...calls];
    return {
      meant,
      json: () => ({
        candidates: [candidate(parts, true)],
        usageMetadata,
        modelVersion: model,
        responseId,
      }),
      sse: () => {
        // Chunks as the Gemini API streams them: CRLF-separated `data:` events, running usage on
        // each, the function calls whole in the last one with the finish reason and final usage.
        const running = { promptTokenCount: prompt, totalTokenCount: prompt };
        const chunks: Obj[] = [];
        if (thought)
          chunks.push({ candidates: [candidate([{ text: thought, thought: true }], false)], usageMetadata: running });
        const pieces = wordPieces(text);
        pieces.forEach((piece, i) => {
          const last = i === pieces.length - 1;
          chunks.push({
            candidates: [candidate([{ text: piece }, ...(last ? calls : [])], last)],
            usageMetadata: last ? usageMetadata : running,
          });
        });
        return chunks.map((c) => `data: ${JSON.stringify({ ...c, modelVersion: model, responseId })}\r\n\r\n`).join('');
      },
    };
  },
};
