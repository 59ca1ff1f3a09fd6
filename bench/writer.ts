// Bench of the recording writer: 100k http.exchange events with 1 KiB bodies (redacted, canonical
// JSON, flushed at step boundaries), against fs.appendFileSync / fs.appendFile of the same bytes.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRecordingWriter } from '../src/recording/index.js';

const EVENTS = 100_000;
const STEP_EVERY = 10; // a step boundary (and a flush) every 10 events

function body(i: number): string {
  const head = `{"id":${i},"model":"gpt-4o","messages":[{"role":"user","content":"`;
  const tail = '"}]}';
  return head + 'lorem ipsum dolor sit amet '.repeat(40).slice(0, 1024 - head.length - tail.length) + tail;
}

export async function run(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'tapedeck-bench-writer-'));
  try {
    const dir = join(root, 'rec');
    const bodies = Array.from({ length: 100 }, (_, i) => body(i));
    const t0 = performance.now();
    const w = await createRecordingWriter(dir, {
      name: 'bench',
      agent: { command: ['node', 'agent.mjs'], cwd: root },
      redaction: { key: 'bench-key' },
    });
    for (let i = 0; i < EVENTS; i++) {
      const stepId = Math.floor(i / STEP_EVERY) + 1;
      if (i % STEP_EVERY === STEP_EVERY - 1) {
        w.append({ type: 'step.completed', stepId, payload: { status: 'success', latencyMs: 1 } });
        continue;
      }
      w.append({
        type: 'http.exchange',
        stepId,
        payload: {
          exchangeId: `x${i}`,
          request: {
            method: 'POST',
            url: 'http://127.0.0.1:8080/v1/chat/completions',
            headers: { 'content-type': 'application/json', authorization: `Bearer sk-${'bench'.repeat(4)}` },
            body: w.body(bodies[i % 100] as string, 'application/json'),
          },
          response: { status: 200, headers: { 'content-type': 'application/json' }, body: w.body('{"ok":true}') },
          startedAt: '2026-11-24T12:00:00.000Z',
          durationMs: 1,
        },
      });
    }
    await w.close('complete');
    const writerMs = performance.now() - t0;
    const file = join(dir, 'events.jsonl');
    const bytes = statSync(file).size;
    const lines = readFileSync(file, 'utf8').split('\n').slice(0, -1);

    const syncFile = join(root, 'append-sync.jsonl');
    const t1 = performance.now();
    for (const line of lines) appendFileSync(syncFile, `${line}\n`);
    const syncMs = performance.now() - t1;

    // fs.promises.appendFile is ~10x slower than the rest: time the first 10% of the lines and scale.
    const asyncFile = join(root, 'append-async.jsonl');
    const sample = lines.slice(0, EVENTS / 10);
    const t2 = performance.now();
    for (const line of sample) await appendFile(asyncFile, `${line}\n`);
    const asyncMs = ((performance.now() - t2) * lines.length) / sample.length;

    const mb = bytes / 1e6;
    const rate = (ms: number) =>
      `${Math.round(EVENTS / (ms / 1000)).toLocaleString('en')} events/s, ${(mb / (ms / 1000)).toFixed(1)} MB/s`;
    console.log(`writer: ${EVENTS.toLocaleString('en')} events, ${mb.toFixed(1)} MB of events.jsonl`);
    console.log(
      `  tapedeck writer (redact + canonical JSON + flush per step): ${writerMs.toFixed(0)} ms, ${rate(writerMs)}`,
    );
    console.log(
      `  baseline fs.appendFileSync per event, same bytes:           ${syncMs.toFixed(0)} ms, ${rate(syncMs)}`,
    );
    console.log(
      `  baseline fs.promises.appendFile per event, same bytes:      ~${asyncMs.toFixed(0)} ms, ${rate(asyncMs)} (timed on 10%)`,
    );
    console.log(`  ratio writer / appendFileSync time: ${(writerMs / syncMs).toFixed(2)}x`);
    console.log(`  ratio writer / appendFile time:     ${(writerMs / asyncMs).toFixed(2)}x`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
