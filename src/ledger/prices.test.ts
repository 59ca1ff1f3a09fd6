import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { bundledPrices, findModelPrice, findToolPrice, loadPrices, snapshotPrices } from './prices.js';

describe('price tables', () => {
  const table = bundledPrices();

  it('bundles a versioned table with a currency and cached, cache-write and reasoning prices', () => {
    expect(table.version).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(table.currency).toBe('USD');
    expect(findModelPrice(table, 'claude-sonnet-4-5')?.cacheWritePerMillion).toBeGreaterThan(0);
    expect(findModelPrice(table, 'o3')?.reasoningPerMillion).toBeGreaterThan(0);
  });

  it('prices dated model names as their family, never a shorter different model', () => {
    expect(findModelPrice(table, 'gpt-4o-2024-08-06')?.model).toBe('gpt-4o');
    expect(findModelPrice(table, 'gpt-4o-mini-2024-07-18')?.model).toBe('gpt-4o-mini');
    expect(findModelPrice(table, 'claude-sonnet-4-5-20250929')?.model).toBe('claude-sonnet-4-5');
    expect(findModelPrice(table, 'openai/gpt-4.1')?.model).toBe('gpt-4.1');
    expect(findModelPrice(table, 'gpt-4')).toBeUndefined();
  });

  it("never prices another modality's model (Realtime, audio, speech, Live) as the text model it extends", () => {
    expect(findModelPrice(table, 'gpt-4o-realtime-preview-2024-12-17')).toBeUndefined();
    expect(findModelPrice(table, 'gpt-4o-mini-realtime-preview')).toBeUndefined();
    expect(findModelPrice(table, 'gpt-4o-audio-preview')).toBeUndefined();
    expect(findModelPrice(table, 'gpt-4o-mini-tts')).toBeUndefined();
    expect(findModelPrice(table, 'gemini-2.0-flash-live-001')).toBeUndefined();
    // Named in the table, it is priced as itself.
    const own = {
      ...table,
      models: [
        ...table.models,
        { model: 'gpt-4o-realtime-preview', inputPerMillion: 5, cachedInputPerMillion: 2.5, outputPerMillion: 20 },
      ],
    };
    expect(findModelPrice(own, 'gpt-4o-realtime-preview-2024-12-17')?.model).toBe('gpt-4o-realtime-preview');
  });

  // [name, the entry it is priced as, or undefined: no price, said so, rather than another model's].
  const NAMES: Array<[string, string | undefined]> = [
    // Snapshots of a priced model: a date, a counter, latest / preview / exp, Vertex's @.
    ['o3-2025-04-16', 'o3'],
    ['gpt-5-2025-08-07', 'gpt-5'],
    ['claude-opus-4-20250514', 'claude-opus-4'],
    ['claude-opus-4-1-20250805', 'claude-opus-4-1'],
    ['claude-3-5-haiku@20241022', 'claude-3-5-haiku'],
    ['gemini-2.0-flash-001', 'gemini-2.0-flash'],
    ['gemini-2.5-pro-exp-03-25', 'gemini-2.5-pro'],
    ['gemini-2.5-flash-lite-preview-06-17', 'gemini-2.5-flash-lite'],
    ['models/gemini-2.5-pro', 'gemini-2.5-pro'],
    ['GPT-4o', 'gpt-4o'],
    // Another model than the entry the name extends: a size, a tier, a version, a use.
    ['o3-mini', undefined],
    ['o3-pro', undefined],
    ['gpt-5-pro', undefined],
    ['claude-opus-4-5', undefined],
    ['claude-opus-4-5-20251101', undefined],
    ['gemini-2.5-flash-image', undefined],
    ['o4-mini-deep-research', undefined],
    ['gpt-4o-search-preview', undefined],
    ['llama3.1:8b', undefined],
    // A Bedrock id is Bedrock's price, per region: not the Anthropic entry (test/sdks/bedrock.test.ts).
    ['anthropic.claude-3-5-haiku-20241022-v1:0', undefined],
    ['us.anthropic.claude-3-5-haiku-20241022-v1:0', undefined],
    ['arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0', undefined],
  ];
  it.each(NAMES)('prices %s as %s', (name, entry) => {
    expect(findModelPrice(table, name)?.model).toBe(entry);
  });

  it('loads an override file and says where a bad one is wrong', () => {
    const dir = mkdtempSync(join(tmpdir(), 'prices-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const good = join(dir, 'good.json');
    writeFileSync(
      good,
      JSON.stringify({
        version: 'x1',
        currency: 'RMB',
        models: [{ model: 'model_x', inputPerMillion: 10, cachedInputPerMillion: 2.5, outputPerMillion: 30 }],
        tools: [{ tool: 'search_*', perCall: 0.02 }],
      }),
    );
    const loaded = loadPrices(good);
    expect(loaded.currency).toBe('RMB');
    expect(findToolPrice(loaded, 'search_flights')?.perCall).toBe(0.02);
    const bad = join(dir, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({ version: 'x', currency: 'USD', models: [{ model: 'm', inputPerMillion: 'ten' }] }),
    );
    expect(() => loadPrices(bad)).toThrow(/bad\.json: models\.0\.inputPerMillion/);
    expect(() => loadPrices(join(dir, 'missing.json'))).toThrow(/cannot read price table/);
  });

  it('snapshots only the models a run used', () => {
    const snap = snapshotPrices(table, ['gpt-4o-mini-2024-07-18', 'unknown-model']);
    expect(snap.models.map((m) => m.model)).toEqual(['gpt-4o-mini']);
    expect(snap.version).toBe(table.version);
  });
});
