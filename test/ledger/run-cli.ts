// Runs tapedeck commands in-process through commander, capturing stdout, as the CLI runs them.
import { Command } from 'commander';
import { vi } from 'vitest';
import { register as registerIngest } from '../../src/cli/commands/ingest.js';
import { register as registerLedger } from '../../src/cli/commands/ledger.js';
import { register as registerQuery } from '../../src/cli/commands/query.js';
import { register as registerWorker } from '../../src/cli/commands/worker.js';

/** `await runCli('ledger', dir, '--json')` -> what the command printed on stdout. */
export async function runCli(...args: string[]): Promise<string> {
  const program = new Command('tapedeck').exitOverride();
  for (const register of [registerLedger, registerIngest, registerQuery, registerWorker]) register(program);
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    await program.parseAsync(['node', 'tapedeck', ...args]);
  } finally {
    spy.mockRestore();
    err.mockRestore();
  }
  return out;
}
