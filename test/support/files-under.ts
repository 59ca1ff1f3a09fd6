// Every regular file under a folder, for the canary searches of the kill tests.
import { lstatSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** Every regular file under `dir` (not through links); a folder that vanishes meanwhile is skipped. */
export function filesUnder(dir: string, out: string[] = []): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const p = path.join(dir, name);
    let info: ReturnType<typeof lstatSync>;
    try {
      info = lstatSync(p);
    } catch {
      continue;
    }
    if (info.isDirectory()) filesUnder(p, out);
    else if (info.isFile()) out.push(p);
  }
  return out;
}
