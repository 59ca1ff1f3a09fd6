// Price tables: the bundled, versioned table, user overrides (zod-validated), and model lookup.
import { readFileSync } from 'node:fs';
import * as z from 'zod';
import { TapedeckError } from '../recording/errors.js';
import { whyNotJson } from '../recording/json.js';
import { StateTypeSchema } from '../recording/schema-events.js';
import { PriceEntrySchema } from '../recording/schema-manifest.js';
import type { PriceEntry, PriceSnapshot } from '../recording/types.js';
import bundled from './prices/2026-11-01.json' with { type: 'json' };

/** A per-call price for a tool (by tool name; `*` matches any run of characters). SCRIPT_EXEC counts as compute. */
export const ToolPriceSchema = z
  .object({
    tool: z.string().min(1),
    stateType: StateTypeSchema.optional(),
    perCall: z.number().nonnegative(),
  })
  .strict();

/** A price table: the manifest's PriceSnapshot plus optional per-call tool prices. */
export const PriceTableSchema = z
  .object({
    version: z.string().min(1),
    currency: z.string().min(1),
    models: z.array(PriceEntrySchema),
    tools: z.array(ToolPriceSchema).optional(),
  })
  .strict();

export type ToolPrice = z.infer<typeof ToolPriceSchema>;
export type PriceTable = z.infer<typeof PriceTableSchema>;

/** Where the prices of a ledger came from. */
export type PriceSource = 'manifest' | 'bundled' | 'file';

/** The table shipped with tapedeck (newest version). */
export function bundledPrices(): PriceTable {
  return PriceTableSchema.parse(bundled);
}

/** Validates a parsed price table; `where` names the file in the error. */
export function parsePrices(value: unknown, where = 'price table'): PriceTable {
  const parsed = PriceTableSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue?.path.length ? issue.path.join('.') : '(root)';
  throw new TapedeckError(
    'PRICES_INVALID',
    `${where}: ${path}: ${issue?.message ?? 'invalid'}. A price table is {"version", "currency", "models": [{"model", "inputPerMillion", "cachedInputPerMillion", "outputPerMillion", "cacheWritePerMillion"?, "cacheWrite1hPerMillion"?, "reasoningPerMillion"?, "serverToolPerCall"?: {"<tool>": price}, "serviceTiers"?: {"<tier>": {prices}}, "longContext"?: {"aboveInputTokens", prices}}], "tools"?: [{"tool", "perCall"}]}.`,
  );
}

/**
 * Loads a price table: the bundled one without a file, else the file (JSON, validated).
 * @example const prices = loadPrices('prices-2027.json');
 */
export function loadPrices(file?: string): PriceTable {
  if (file === undefined) return bundledPrices();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new TapedeckError('PRICES_NOT_FOUND', `cannot read price table ${file}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new TapedeckError('PRICES_INVALID', `${file}: not JSON (${whyNotJson(error)})`);
  }
  return parsePrices(json, file);
}

/** The prices a recording is costed at: its manifest's snapshot, else the bundled table. */
export function recordingPrices(manifest: { prices?: PriceSnapshot | undefined }): {
  table: PriceTable;
  source: PriceSource;
} {
  if (manifest.prices) return { table: tableFromSnapshot(manifest.prices), source: 'manifest' };
  return { table: bundledPrices(), source: 'bundled' };
}

/** The manifest's snapshot as a price table. */
export function tableFromSnapshot(snapshot: PriceSnapshot): PriceTable {
  return { version: snapshot.version, currency: snapshot.currency, models: snapshot.models };
}

/** The snapshot to store in a manifest: only the entries of the models a run used. */
export function snapshotPrices(table: PriceTable, models: Iterable<string>): PriceSnapshot {
  const entries = new Map<string, PriceEntry>();
  for (const model of models) {
    const entry = findModelPrice(table, model);
    if (entry) entries.set(entry.model, entry);
  }
  return { version: table.version, currency: table.currency, models: [...entries.values()] };
}

/**
 * A part of a model name's tail that names a snapshot of the same model, not another model: a date
 * (`2024-08-06`, `20250929`, `@20240620`), a counter (`001`), `latest`, `preview`, `exp`. Any other
 * word or number (`mini`, `pro`, `lite`, `realtime`, `audio`, `live`, the `5` of `claude-opus-4-5`)
 * makes another model, with other prices.
 */
const SNAPSHOT_PART = /^(?:\d{2,}|latest|preview|exp|experimental)$/;

/** Whether `tail` (what a name adds after an entry, from its `-`/`@`/`:`) names a snapshot of that entry. */
function isSnapshotTail(tail: string): boolean {
  const parts = tail.split(/[-@:]/).slice(1);
  return parts.every((p) => SNAPSHOT_PART.test(p));
}

/**
 * The price of a model: the exact name, else the longest entry the name extends by a snapshot's
 * tail only (`gpt-4o-2024-08-06` and `claude-sonnet-4-5-20250929` are priced as `gpt-4o` and
 * `claude-sonnet-4-5`, `gemini-2.0-flash-001` as `gemini-2.0-flash`), matched case-insensitively and
 * ignoring a `provider/` prefix (a Bedrock id, `anthropic.claude-…-v1:0`, is not the entry: its
 * prices are Bedrock's, per region). Never an entry a name extends into another model (`gpt-4o-mini` is not `gpt-4o`, `o3-pro` not `o3`, `claude-opus-4-5` not
 * `claude-opus-4`, `gpt-4o-realtime-preview` not `gpt-4o`): no price, rather than another model's.
 */
export function findModelPrice(table: PriceTable, model: string): PriceEntry | undefined {
  const name = model.toLowerCase().replace(/^[a-z0-9_-]+\//, '');
  let best: PriceEntry | undefined;
  for (const entry of table.models) {
    const candidate = entry.model.toLowerCase();
    if (candidate === name || candidate === model.toLowerCase()) return entry;
    if (
      name.startsWith(candidate) &&
      /[-@:]/.test(name.charAt(candidate.length)) &&
      isSnapshotTail(name.slice(candidate.length))
    ) {
      if (!best || candidate.length > best.model.length) best = entry;
    }
  }
  return best;
}

/**
 * The prices one call is billed at: the entry's own, or those of the service tier the provider
 * served it at (Usage.serviceTier) when the entry has them, else — a call whose input (cache
 * included) is above the entry's `longContext.aboveInputTokens` — its long-context prices, for every
 * bucket of the call. `unpricedTier` names a tier the entry has no prices for: billed at the standard
 * ones, which the caller says.
 * @example callPrices(entry, { inputTokens: 250_000 }).price.inputPerMillion
 */
export function callPrices(
  entry: PriceEntry,
  call: { inputTokens: number; serviceTier?: string | undefined },
): { price: PriceEntry; unpricedTier?: string } {
  if (call.serviceTier !== undefined) {
    const tier = entry.serviceTiers?.[call.serviceTier];
    if (tier) return { price: { ...entry, ...tier } };
    return { price: entry, unpricedTier: call.serviceTier };
  }
  const long = entry.longContext;
  if (long && call.inputTokens > long.aboveInputTokens) {
    const { aboveInputTokens: _, ...prices } = long;
    return { price: { ...entry, ...prices } };
  }
  return { price: entry };
}

/** The per-call price of a tool by name, if the table has one. */
export function findToolPrice(table: PriceTable, name: string): ToolPrice | undefined {
  for (const tool of table.tools ?? []) {
    if (tool.tool === name) return tool;
  }
  for (const tool of table.tools ?? []) {
    if (!tool.tool.includes('*')) continue;
    const pattern = new RegExp(`^${tool.tool.split('*').map(escapeRegExp).join('.*')}$`);
    if (pattern.test(name)) return tool;
  }
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
