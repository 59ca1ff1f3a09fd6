// Runs an example agent as a child process and collects its answer (stdout) and trace (stderr).
import { spawn } from 'node:child_process';

export interface AgentRun {
  exitCode: number | null;
  /** The agent's final answer (stdout, trimmed). */
  answer: string;
  stdout: string;
  stderr: string;
}

/** Runs an agent process to its end, collecting stdout (the answer) and stderr. */
export function runProcess(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<AgentRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString('utf8');
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (exitCode) => resolvePromise({ exitCode, answer: stdout.trim(), stdout, stderr }));
  });
}
