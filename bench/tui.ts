// bench/tui: time from a keypress to the rendered frame while scrolling a 10,000-step recording
// in the run view, as ink draws it for a terminal and in its unthrottled debug mode, against a baseline
// measured in the same run: the same keypress -> state -> frame path drawing a static frame of
// the same size. Target: under 16 ms median.
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import { defaultServices } from '../tui/data/engines.js';
import { syntheticRecording } from '../tui/data/synthetic.js';
import { importInkInteractive, RENDER_MAX_FPS } from '../tui/index.js';

const WIDTH = 120;
const HEIGHT = 40;
const KEYS = Number(process.env.BENCH_TUI_KEYS ?? 100);

class FakeStdout extends EventEmitter {
  readonly isTTY = true;
  columns = WIDTH;
  rows = HEIGHT + 1;
  onWrite: ((chunk: string) => void) | undefined;
  write(chunk: string): boolean {
    this.onWrite?.(chunk);
    return true;
  }
}

class FakeStdin extends EventEmitter {
  readonly isTTY = true;
  private data: string | null = null;
  setEncoding() {}
  setRawMode() {}
  resume() {}
  pause() {}
  ref() {}
  unref() {}
  read(): string | null {
    const d = this.data;
    this.data = null;
    return d;
  }
  press(data: string) {
    this.data = data;
    this.emit('readable');
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2
    ? (s[(s.length - 1) / 2] as number)
    : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)] as number;
const idle = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Tree = Parameters<Awaited<ReturnType<typeof importInkInteractive>>['ink']['render']>[0];

/** Presses `key` KEYS times; each sample is the time until a frame containing `expect(i)` is written. */
interface Samples {
  /** Wall time from keypress to the frame written. */
  wall: number[];
  /** CPU time this process spent in that interval (immune to other processes on a loaded machine). */
  cpu: number[];
}

async function measure(
  tree: Tree,
  expect: (i: number) => string,
  ready: string,
  keys = KEYS,
  debug = false,
): Promise<Samples> {
  const { ink } = await importInkInteractive();
  const stdout = new FakeStdout();
  const stdin = new FakeStdin();
  let waiting: { text: string; resolve: () => void } | undefined;
  let all = '';
  stdout.onWrite = (chunk) => {
    if (!waiting) return;
    all += chunk;
    if (all.includes(waiting.text)) {
      const w = waiting;
      waiting = undefined;
      w.resolve();
    }
  };
  const frame = (text: string) =>
    new Promise<void>((resolve, reject) => {
      all = '';
      const timer = setTimeout(() => reject(new Error(`no frame with "${text}"`)), 10_000);
      waiting = {
        text,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
    });
  // Ready when the first frame with `ready` is drawn (for the run view: the ledger's costs are in).
  const isReady = frame(ready);
  const instance = ink.render(tree, {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: stdin as unknown as NodeJS.ReadStream,
    exitOnCtrlC: false,
    patchConsole: false,
    maxFps: RENDER_MAX_FPS,
    debug,
  });
  await isReady;
  await idle(100);
  const samples: Samples = { wall: [], cpu: [] };
  for (let i = 1; i <= keys; i++) {
    const shown = frame(expect(i));
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    stdin.press('j');
    await shown;
    samples.wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    samples.cpu.push((c.user + c.system) / 1000);
    // Let ink's frame throttle window pass: this measures a keypress's latency, not the frame cap.
    await idle(1000 / RENDER_MAX_FPS + 2);
  }
  instance.unmount();
  instance.cleanup();
  return samples;
}

export async function run(): Promise<void> {
  const { ink, react, app } = await importInkInteractive();
  const { Box, Text, useInput } = ink;
  const services = defaultServices();

  // Baseline: the same input -> state -> frame path, drawing a static frame of the same size.
  const staticLines = Array.from({ length: HEIGHT - 1 }, (_, i) =>
    `${String(i).padStart(5)} ${'static frame line '.repeat(6)}`.slice(0, WIDTH),
  );
  function StaticFrame() {
    const [n, setN] = react.useState(0);
    useInput(() => setN((x) => x + 1));
    return react.createElement(
      Box,
      { flexDirection: 'column', width: WIDTH, height: HEIGHT },
      react.createElement(Text, null, `frame ${n}#`),
      ...staticLines.map((l, i) => react.createElement(Text, { key: i, wrap: 'truncate' }, l)),
    );
  }
  const runViewTree = (steps: number) =>
    react.createElement(app.App, {
      services,
      recording: syntheticRecording({ steps, name: `bench-${steps}` }),
      width: WIDTH,
      height: HEIGHT,
      color: true,
      worldDelayMs: 60_000, // the world at a step is computed once scrolling stops; not in this loop
    });
  const cases = async (debug: boolean) => ({
    baseline: await measure(react.createElement(StaticFrame), (i) => `frame ${i}#`, 'frame 0#', KEYS, debug),
    big: await measure(runViewTree(10_000), (i) => `Step ${i + 1}/10000`, '$0.', KEYS, debug),
    small: await measure(runViewTree(100), (i) => `Step ${i + 1}/100`, '$0.', Math.min(KEYS, 99), debug),
  });
  const report = (label: string, r: Awaited<ReturnType<typeof cases>>) => {
    const b = median(r.baseline.wall);
    const m10k = median(r.big.wall);
    const m100 = median(r.small.wall);
    const cb = median(r.baseline.cpu);
    const c10k = median(r.big.cpu);
    return [
      `${label}`,
      `  baseline (static frame of the same size): median ${b.toFixed(2)} ms (cpu ${cb.toFixed(2)} ms), p95 ${p95(r.baseline.wall).toFixed(2)} ms`,
      `  run view, 10,000 steps: median ${m10k.toFixed(2)} ms = ${(m10k / b).toFixed(2)}x baseline (cpu ${c10k.toFixed(2)} ms = ${(c10k / cb).toFixed(2)}x), p95 ${p95(r.big.wall).toFixed(2)} ms; target < 16 ms: ${m10k < 16 ? 'met' : 'not met'}`,
      `  run view, 100 steps:    median ${m100.toFixed(2)} ms = ${(m100 / b).toFixed(2)}x baseline (cpu ${median(r.small.cpu).toFixed(2)} ms)`,
      `  10,000 vs 100 steps: ${(m10k / m100).toFixed(2)}x wall, ${(c10k / median(r.small.cpu)).toFixed(2)}x cpu (virtualised: only the visible rows render)`,
    ];
  };
  const lines = [
    `${KEYS} keypresses (j) per case, ${WIDTH}x${HEIGHT} terminal`,
    ...report(`as drawn to a terminal (ink's frame throttle at ${RENDER_MAX_FPS} fps):`, await cases(false)),
    ...report('render only (ink debug mode: every frame written at once):', await cases(true)),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
