// Small, deterministic formatters for the terminal UI: numbers, money, durations, padding.

/** 1234 -> "1.2k", 12 -> "12"; undefined -> "—". */
export function fmtTokens(n: number | undefined): string {
  if (n === undefined || Number.isNaN(n)) return '—';
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** Money with enough precision for per-step LLM costs: $0.0012, $1.23. */
export function fmtCost(n: number | undefined, currency = 'USD'): string {
  if (n === undefined || Number.isNaN(n)) return '—';
  const unit = currency === 'USD' ? '$' : `${currency} `;
  const sign = n < 0 ? '-' : '';
  const a = Math.abs(n);
  if (a === 0) return `${unit}0`;
  if (a < 0.01) return `${sign}${unit}${a.toFixed(4)}`;
  if (a < 100) return `${sign}${unit}${a.toFixed(3)}`;
  return `${sign}${unit}${a.toFixed(0)}`;
}

/** 340 -> "340ms", 12_300 -> "12.3s". */
export function fmtMs(n: number | undefined): string {
  if (n === undefined || Number.isNaN(n)) return '—';
  if (n < 1000) return `${Math.round(n)}ms`;
  if (n < 60_000) return `${(n / 1000).toFixed(1)}s`;
  return `${Math.floor(n / 60_000)}m${Math.round((n % 60_000) / 1000)}s`;
}

export function fmtPercent(ratio: number | undefined): string {
  if (ratio === undefined || Number.isNaN(ratio)) return '—';
  return `${(ratio * 100).toFixed(1)}%`;
}

/** ISO time -> "2026-11-24 11:20" in UTC, so frames do not depend on the machine's zone. */
export function fmtDate(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso.slice(0, 16);
  return d.toISOString().slice(0, 16).replace('T', ' ');
}

/** Cuts to `width` display cells (ellipsis when cut) and pads right. */
export function clip(text: string, width: number): string {
  if (width <= 0) return '';
  const flat = text.replace(/[\r\n\t]+/g, ' ');
  if (flat.length > width) return width === 1 ? '…' : `${flat.slice(0, width - 1)}…`;
  return flat.padEnd(width);
}

/** Right-aligned clip. */
export function clipRight(text: string, width: number): string {
  if (text.length > width) return clip(text, width);
  return text.padStart(width);
}

/** Splits text into at most `max` lines of at most `width` cells (hard wrap), marking what was cut. */
export function wrapLines(text: string, width: number, max: number): string[] {
  if (max <= 0 || width <= 0) return [];
  const out: string[] = [];
  for (const raw of text.replace(/\t/g, '  ').split('\n')) {
    let line = raw;
    do {
      out.push(line.slice(0, width));
      line = line.slice(width);
    } while (line.length > 0 && out.length <= max);
    if (out.length > max) break;
  }
  if (out.length > max) {
    const kept = out.slice(0, max);
    kept[max - 1] = `${clip(kept[max - 1] ?? '', Math.max(1, width - 1)).trimEnd()}…`;
    return kept;
  }
  return out;
}

/** A compact one-line rendering of a JSON-ish value. */
export function compactJson(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
