// Bench of redaction by value: Redactor.text() over a model call's body (1 KiB), a large prompt
// (100 KiB) and a 2 MB body, with no known secret values (the baseline, measured in the same run)
// and with 5 (an agent's env: a few API keys and a database password), 50 (about the cap of
// learned values, 64: a server whose runs send many different tokens) and 300 (an env of that
// many secrets) known values. Prints µs a body (the fastest of many batches) and the ratio to
// the baseline.
import { randomBytes } from 'node:crypto';
import { createRedactor } from '../src/recording/index.js';

function body(size: number): string {
  const head =
    '{"model":"gpt-4o","max_tokens":512,"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"';
  const tail = '"}]}';
  const words = 'the order 1234 of customer alice was shipped to 5 Main St on 2026-11-30; refund policy applies ';
  return head + words.repeat(Math.ceil(size / words.length)).slice(0, size - head.length - tail.length) + tail;
}

function secrets(n: number): string[] {
  return Array.from({ length: n }, (_, i) =>
    i % 2 === 0 ? `acme_live_${randomBytes(12).toString('hex')}` : randomBytes(18).toString('base64url'),
  );
}

/** The fastest of many short batches (the machine is shared: the minimum is the steadiest figure), in µs a call. */
function timeUs(fn: () => void, batchMs = 20, batches = 15): number {
  for (let i = 0; i < 3; i++) fn();
  let best = Number.POSITIVE_INFINITY;
  for (let b = 0; b < batches; b++) {
    let n = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < batchMs) {
      fn();
      n++;
    }
    best = Math.min(best, ((performance.now() - t0) * 1000) / n);
  }
  return best;
}

export async function run(): Promise<void> {
  const sizes: Array<[string, string]> = [
    ['1 KiB', body(1024)],
    ['100 KiB', body(100 * 1024)],
    ['2 MB', body(2_000_000)],
  ];
  const redactors: Array<[string, ReturnType<typeof createRedactor>]> = [
    ['no known values (baseline)', createRedactor({ key: 'bench-key', env: false })],
    ...[5, 50, 300].map(
      (n) =>
        [`${n} known values`, createRedactor({ key: 'bench-key', env: false, secrets: secrets(n) })] as [
          string,
          ReturnType<typeof createRedactor>,
        ],
    ),
  ];
  for (const [size, text] of sizes) {
    let base = 0;
    for (const [name, r] of redactors) {
      const us = timeUs(() => r.text(text));
      if (base === 0) base = us;
      console.log(
        `  text() ${size.padEnd(8)} ${name.padEnd(28)} ${us.toFixed(1).padStart(9)} µs  x${(us / base).toFixed(2)}`,
      );
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
