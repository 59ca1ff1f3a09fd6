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
