// Whether a reader's time grows linearly with its input, judged in one run by how its CPU time grows
// (a loaded CI machine's waits for a core are not counted), never by an absolute bound: eight times the text takes
// about eight times as long when linear, sixty-four times when quadratic. The bound of 32 sits
// between: a quadratic reader measured 65-77; a linear one up to 21 (`one dollars and ` in
// mentionsIn: the smaller text runs in cache and the young generation, 16 KiB 20 ms, 128 KiB 372,
// 256 KiB 788, 512 KiB 1517), which a bound of 24 failed once under load (at 4x the text and a
// bound of 8, such tests failed under a load of 16-19 on two cores). Best of three interleaved readings each; a shape read in well
// under a second at the larger size is fine either way.
import { expect } from 'vitest';

/**
 * Fails when `read` of `unit` repeated to 8 x `kib` KiB (default 16: 128 KiB) takes 32 times or more
 * its time at `kib` KiB; a reading of the larger text under `floorMs` (default 300) passes as it is.
 */
export function expectLinearIn(
  name: string,
  unit: string,
  read: (text: string) => unknown,
  { kib = 16, floorMs = 300 }: { kib?: number; floorMs?: number } = {},
): void {
  const text = (size: number) => unit.repeat(Math.ceil((size * 1024) / unit.length));
  const [short, long] = [text(kib), text(8 * kib)];
  // CPU time, not wall time: a process waiting for a core on a loaded machine is not slower.
  const once = (input: string) => {
    const started = process.cpuUsage();
    read(input);
    const spent = process.cpuUsage(started);
    return (spent.user + spent.system) / 1000;
  };
  let small = Number.POSITIVE_INFINITY;
  let large = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    small = Math.min(small, once(short));
    large = Math.min(large, once(long));
  }
  if (large < floorMs) return;
  expect(
    large / small,
    `${name}: ${small.toFixed(0)} ms at ${kib} KiB, ${large.toFixed(0)} ms at ${8 * kib} KiB`,
  ).toBeLessThan(32);
}
