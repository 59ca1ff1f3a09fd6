// `npm run bench [name…]`: runs every bench/<name>.ts (each exports `run()`), or the named ones.
// Each bench prints its figures as ratios against a baseline it measures in the same run.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const all = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.endsWith('.test.ts'))
  .map((f) => f.slice(0, -3))
  .sort();
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length > 0) {
  process.stderr.write(`unknown bench: ${unknown.join(', ')} (have: ${all.join(', ')})\n`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length > 0 ? wanted : all) {
  process.stdout.write(`\n== bench/${name} ==\n`);
  try {
    const mod = (await import(pathToFileURL(join(here, `${name}.ts`)).href)) as { run?: () => Promise<void> };
    if (typeof mod.run !== 'function') throw new Error(`bench/${name}.ts exports no run()`);
    await mod.run();
  } catch (error) {
    failed++;
    process.stdout.write(`bench/${name} failed: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}
process.exit(failed > 0 ? 1 : 0);
