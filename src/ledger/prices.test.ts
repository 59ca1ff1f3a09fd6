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
