// Delta debugging over the hunks of a prompt diff: the smallest set of hunks that flips the outcome.
import { structuredPatch } from 'diff';
import { TapedeckError } from '../recording/index.js';
import { cachedProbe, type ProbeFn, type ProbeOutcome, type ProbeStats, type ProbeStore } from './probe-cache.js';

/** One hunk of the diff from the old prompt to the new one (0 lines of context, so hunks are independent). */
export interface PromptHunk {
  index: number;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** The hunk's lines as in a unified diff: ' ', '-', '+' prefixed. */
  lines: string[];
}

/** The hunks of old -> new. */
export function promptHunks(from: string, to: string): PromptHunk[] {
  const patch = structuredPatch('old', 'new', from, to, '', '', { context: 0 });
  return patch.hunks.map((h, index) => ({
    index,
    oldStart: h.oldStart,
    oldLines: h.oldLines,
    newStart: h.newStart,
    newLines: h.newLines,
    lines: h.lines,
  }));
}

/**
 * Splits hunks that only add or only remove lines into one change per line, so ddmin can pick
 * single lines out of a block (three added rules in one hunk become three changes). Hunks that
 * replace lines stay whole: which new line stands for which old one is not defined.
 */
export function splitHunks(hunks: PromptHunk[]): PromptHunk[] {
  const out: PromptHunk[] = [];
  for (const hunk of hunks) {
    const body = hunk.lines.filter((l) => !l.startsWith('\\'));
    const adds = body.every((l) => l.startsWith('+'));
    const removes = body.every((l) => l.startsWith('-'));
    if (body.length <= 1 || !(adds || removes)) {
      out.push({ ...hunk, index: out.length });
      continue;
    }
    let j = 0;
    for (const [i, line] of hunk.lines.entries()) {
      if (line.startsWith('\\')) continue;
      const next = hunk.lines[i + 1];
      const lines = next?.startsWith('\\') ? [line, next] : [line];
      out.push(
        adds
          ? { index: out.length, oldStart: hunk.oldStart, oldLines: 0, newStart: hunk.newStart + j, newLines: 1, lines }
          : {
              index: out.length,
              oldStart: hunk.oldStart + j,
              oldLines: 1,
              newStart: hunk.newStart,
              newLines: 0,
              lines,
            },
      );
      j++;
    }
  }
  return out;
}

/** The old text with only the chosen hunks applied. Applying all gives the new text; none gives the old. */
export function applyHunks(from: string, hunks: PromptHunk[]): string {
  const lines = splitLines(from);
  const out: string[] = [];
  let cursor = 0; // index into lines
  for (const hunk of [...hunks].sort((a, b) => a.oldStart - b.oldStart)) {
    // jsdiff (v8, 0 context) numbers a hunk by the old line it replaces or is inserted before (1-based).
    const start = hunk.oldStart - 1;
    while (cursor < start) out.push(lines[cursor++]!);
    let noNewlineAtEnd = false;
    let last: '+' | '-' | undefined;
    for (const line of hunk.lines) {
      if (line.startsWith('\\')) {
        if (last === '+') noNewlineAtEnd = true;
        continue;
      }
      last = line[0] === '+' ? '+' : '-';
      if (line[0] === '+') out.push(`${line.slice(1)}\n`);
      else if (line[0] === '-') cursor++;
    }
    if (noNewlineAtEnd && out.length > 0) out[out.length - 1] = out[out.length - 1]!.replace(/\n$/, '');
  }
  while (cursor < lines.length) out.push(lines[cursor++]!);
  return out.join('');
}

/** Lines with their terminators ('a\nb' -> ['a\n', 'b']). */
function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

export interface DdminOptions {
  from: string;
  to: string;
  /** 'hunk': the diff's hunks; 'line': added/removed blocks split per line; 'auto' (default): lines when the diff is one hunk. */
  granularity?: 'hunk' | 'line' | 'auto';
  probe: ProbeFn;
  recordingId: string;
  store?: ProbeStore;
  /** What judges a replay (part of the cache key): "predicate:all", "contract:<sha256>"… */
  judge?: string;
  onProbe?: (entry: DdminProbe) => void;
}

export interface DdminProbe {
  hunks: number[];
  ok: boolean;
  flips: boolean;
  cached: boolean;
  cost?: number;
  /** The replay timed out: unresolved, never a flip. */
  timedOut?: boolean;
}

export interface DdminResult {
  hunks: PromptHunk[];
  /** The hunks (indexes) whose application alone flips the outcome from `from`'s to `to`'s. */
  minimal: number[];
  /** `from`'s and `to`'s outcomes; ddmin needs them to differ. */
  fromOk: boolean;
  toOk: boolean;
  /** The prompt with only the minimal hunks applied. */
  prompt: string;
  probes: DdminProbe[];
  stats: ProbeStats;
}

/**
 * ddmin (Zeller & Hildebrandt) over the hunks of `from` -> `to`: the outcomes of the two prompts differ,
 * and the result is a 1-minimal set of hunks that, applied to `from` alone, gives `to`'s outcome.
 */
export async function ddminPromptHunks(options: DdminOptions): Promise<DdminResult> {
  const raw = promptHunks(options.from, options.to);
  const granularity = options.granularity ?? 'auto';
  const hunks = granularity === 'line' || (granularity === 'auto' && raw.length === 1) ? splitHunks(raw) : raw;
  if (hunks.length === 0)
    throw new TapedeckError('BISECT_PROMPT_INPUT', 'the two prompts are identical: there is no diff to minimise');
  const { probe, stats } = cachedProbe(options.probe, options.recordingId, options.store, options.judge);
  const probes: DdminProbe[] = [];
  const run = async (subset: number[], target?: boolean): Promise<boolean | 'timed-out'> => {
    const hitsBefore = stats.cacheHits;
    const text = applyHunks(
      options.from,
      subset.map((i) => hunks[i]!),
    );
    const outcome: ProbeOutcome = await probe(text);
    const entry: DdminProbe = {
      hunks: subset,
      ok: outcome.ok,
      // A timed-out replay is unresolved (ddmin's "?"): it never counts as reproducing the outcome.
      flips: target === undefined || outcome.timedOut ? false : outcome.ok === target,
      cached: stats.cacheHits > hitsBefore,
    };
    if (outcome.cost !== undefined) entry.cost = outcome.cost;
    if (outcome.timedOut) entry.timedOut = true;
    probes.push(entry);
    options.onProbe?.(entry);
    return outcome.timedOut ? 'timed-out' : outcome.ok;
  };
  const all = hunks.map((h) => h.index);
  const fromOk = await run([]);
  const toOk = await run(all);
  if (fromOk === 'timed-out' || toOk === 'timed-out') {
    throw new TapedeckError(
      'BISECT_PROBE_TIMED_OUT',
      `the replay with the ${fromOk === 'timed-out' ? 'old' : 'new'} prompt timed out, so there is no outcome to minimise towards; give a longer --timeout (or fix what the agent waits on)`,
    );
  }
  if (fromOk === toOk) {
    throw new TapedeckError(
      'BISECT_DDMIN_NO_FLIP',
      `both prompts ${toOk ? 'pass' : 'fail'}: ddmin needs the old and the new prompt to have different outcomes`,
    );
  }
  const flips = async (subset: number[]): Promise<boolean> => (await run(subset, toOk)) === toOk;
  let current = all;
  let n = 2;
  while (current.length >= 2) {
    const chunks = split(current, n);
    let reduced = false;
    for (const chunk of chunks) {
      if (await flips(chunk)) {
        current = chunk;
        n = 2;
        reduced = true;
        break;
      }
    }
    if (!reduced && n > 2) {
      for (const chunk of chunks) {
        const complement = current.filter((i) => !chunk.includes(i));
        if (await flips(complement)) {
          current = complement;
          n = Math.max(n - 1, 2);
          reduced = true;
          break;
        }
      }
    }
    if (!reduced) {
      if (n >= current.length) break;
      n = Math.min(current.length, n * 2);
    }
  }
  return {
    hunks,
    minimal: current,
    fromOk,
    toOk,
    prompt: applyHunks(
      options.from,
      current.map((i) => hunks[i]!),
    ),
    probes,
    stats,
  };
}

function split(items: number[], n: number): number[][] {
  const out: number[][] = [];
  let start = 0;
  for (let k = 0; k < n; k++) {
    const end = start + Math.floor((items.length - start) / (n - k));
    if (end > start) out.push(items.slice(start, end));
    start = end;
  }
  return out;
}
