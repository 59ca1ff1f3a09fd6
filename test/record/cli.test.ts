// `tapedeck record` on the command line: help that teaches, clear errors, the agent's exit code.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { readRecording } from '../../src/recording/index.js';
import { tempDir } from './helpers.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/tapedeck.mjs');
const tmp = tempDir();
afterAll(() => tmp.remove());

const tapedeck = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', cwd: tmp.dir });

it('explains itself with --help', () => {
  const help = tapedeck('record', '--help');
  expect(help.status).toBe(0);
  expect(help.stdout).toContain('--fs <dir>');
  expect(help.stdout).toContain('tapedeck record --fs ./workspace --db');
});

it('says clearly when the output folder is not writable', () => {
  const run = tapedeck('record', '--out', '/etc/hostname/rec', '--', process.execPath, '-e', '1');
  expect(run.status).toBe(2);
  expect(run.stderr).toMatch(/^tapedeck: cannot write the recording to \/etc\/hostname\/rec \(ENOTDIR\)/);
});

it('rejects a --sample that is not a fraction', () => {
  const run = tapedeck('record', '--sample', '2', '--', process.execPath, '-e', '1');
  expect(run.status).toBe(2);
  expect(run.stderr).toContain('--sample "2" is not a fraction between 0 and 1');
});

it('records a run, prints JSON, and exits with the agent exit code', () => {
  const out = path.join(tmp.dir, 'rec');
  const run = tapedeck('record', '--json', '--out', out, '--', process.execPath, '-e', 'process.exitCode = 3');
  expect(run.status).toBe(3);
  expect(JSON.parse(run.stdout)).toMatchObject({ dir: out, exitCode: 3, recorded: true, status: 'incomplete' });
  return readRecording(out).then((recording) => expect(recording.manifest.status).toBe('incomplete'));
});

it('a command that does not exist is one line, exit 2, and leaves no recording folder behind', () => {
  const run = tapedeck('record', '--', 'no-such-agent-command-7c1');
  expect(run.status).toBe(2);
  expect(run.stderr.trim()).toBe('tapedeck: cannot start "no-such-agent-command-7c1": command not found');
  expect(
    existsSync(path.join(tmp.dir, 'recordings'))
      ? readdirSync(path.join(tmp.dir, 'recordings')).filter((n) => n.startsWith('no-such-agent'))
      : [],
  ).toEqual([]);
});
