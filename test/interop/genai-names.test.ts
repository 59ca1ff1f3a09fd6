// gen_ai.provider.name and gen_ai.operation.name as the OpenTelemetry GenAI conventions name them,
// for every provider tapedeck decodes (one wire API can be several providers by where it was sent).
import * as semconv from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import { genAiOperation, genAiProviderName } from '../../src/interop/genai.js';
import { PROVIDERS } from '../../src/providers/index.js';

describe('GenAI semantic-convention names', () => {
  it.each([
    ['openai', 'https://api.openai.com/v1/chat/completions', 'openai'],
    ['openai', 'https://acme.openai.azure.com/openai/deployments/gpt-4o/chat/completions', 'azure.ai.openai'],
    ['anthropic', 'https://api.anthropic.com/v1/messages', 'anthropic'],
    [
      'google',
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent',
      'gcp.gemini',
    ],
    [
      'google',
      'https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent',
      'gcp.vertex_ai',
    ],
    ['bedrock', 'https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse', 'aws.bedrock'],
    ['bedrock', 'https://bedrock-runtime.us-east-1.amazonaws.com/model/m/invoke', 'aws.bedrock'],
    [
      'vertex',
      'https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-3-5-haiku@20241022:rawPredict',
      'gcp.vertex_ai',
    ],
    ['ollama', 'http://127.0.0.1:11434/api/chat', 'ollama'],
  ])('%s at %s is %s', (provider, url, name) => {
    expect(genAiProviderName(provider, new URL(url))).toBe(name);
  });

  it('names every registered provider, and each call by its operation', () => {
    // The conventions' own lists (@opentelemetry/semantic-conventions); Ollama is not on it.
    const values = (prefix: string): Set<unknown> =>
      new Set(Object.entries(semconv).flatMap(([k, v]) => (k.startsWith(prefix) ? [v] : [])));
    const listed = values('GEN_AI_PROVIDER_NAME_VALUE_');
    const named = new Set(PROVIDERS.map((p) => genAiProviderName(p.provider)));
    expect([...named].filter((n) => !listed.has(n))).toEqual(['ollama']);
    for (const p of PROVIDERS)
      expect([...values('GEN_AI_OPERATION_NAME_VALUE_')]).toContain(
        genAiOperation({ provider: p.provider, api: p.api, output: p.kind === 'embeddings' ? { embeddings: {} } : {} }),
      );
    const op = (id: string, output: { embeddings?: unknown } = {}) => {
      const p = PROVIDERS.find((x) => x.id === id);
      return p && genAiOperation({ provider: p.provider, api: p.api, output });
    };
    expect(op('openai.chat.completions')).toBe('chat');
    expect(op('google.generateContent')).toBe('generate_content');
    expect(op('ollama.generate')).toBe('text_completion');
    expect(op('openai.embeddings', { embeddings: { count: 1, dimensions: 8 } })).toBe('embeddings');
  });
});
