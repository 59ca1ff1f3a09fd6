// Runs the bisect/diff commands in-process (as main.ts would), capturing stdout, stderr and the exit code.
import { Command } from 'commander';
import { register as registerBisect } from '../../src/cli/commands/bisect.js';
import { register as registerDiff } from '../../src/cli/commands/diff.js';
import { isTapedeckError } from '../../src/recording/index.js';

export async function runCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const program = new Command('tapedeck').exitOverride();
  registerBisect(program);
  registerDiff(program);
  let stdout = '';
  let stderr = '';
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    stdout += chunk.toString();
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += chunk.toString();
    return true;
  }) as typeof process.stderr.write;
  const before = process.exitCode;
  process.exitCode = 0;
  let code = 0;
  try {
    await program.parseAsync(['node', 'tapedeck', ...args]);
    code = Number(process.exitCode ?? 0);
  } catch (error) {
    if (!isTapedeckError(error)) throw error;
    stderr += `tapedeck: ${error.message}\n`;
    code = error.exitCode;
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    process.exitCode = before;
  }
  return { code, stdout, stderr };
}
