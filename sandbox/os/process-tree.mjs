// A process and everything it started, read from /proc: what each is doing (for a stopped
// replay's one-line reason) and how to end them all (a timed-out or interrupted agent leaves
// nothing running). Used by the replayer on its side and by the OS sandbox's init inside.
import fs from 'node:fs';

/**
 * @typedef {{ pid: number, ppid: number, pgid: number, state: string, ticks: number, command: string }} TreeProcess
 */

/** @param {number} pid @returns {TreeProcess | undefined} */
function readProcess(pid) {
  let stat;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // `pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime …`:
  // comm may hold spaces and parentheses, so the fields are read after its last ')'.
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  let command = stat.slice(stat.indexOf('(') + 1, close);
  try {
    const line = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    if (line) command = line;
  } catch {}
  return {
    pid,
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    state: fields[0] ?? '?',
    ticks: Number(fields[11]) + Number(fields[12]),
    command,
  };
}

/** Every process on the machine (as this /proc shows it), by pid. */
function allProcesses() {
  /** @type {Map<number, TreeProcess>} */
  const out = new Map();
  let names = [];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const p = readProcess(Number(name));
    if (p) out.set(p.pid, p);
  }
  return out;
}

/**
 * The process `root` and its descendants, and (with `group`) every process in its process group
 * (one that was reparented when its parent died is still in it), zombies left out. Root first.
 * @param {number} root @param {{ group?: boolean }} [options] @returns {TreeProcess[]}
 */
export function processTree(root, options = {}) {
  const all = allProcesses();
  /** @type {Map<number, number[]>} */
  const children = new Map();
  for (const p of all.values()) {
    const list = children.get(p.ppid) ?? [];
    list.push(p.pid);
    children.set(p.ppid, list);
  }
  /** @type {Set<number>} */
  const seen = new Set();
  const queue = [root];
  if (options.group) for (const p of all.values()) if (p.pgid === root) queue.push(p.pid);
  while (queue.length > 0) {
    const pid = /** @type {number} */ (queue.shift());
    if (seen.has(pid) || !all.has(pid)) continue;
    seen.add(pid);
    for (const child of children.get(pid) ?? []) queue.push(child);
    if (options.group) for (const p of all.values()) if (p.pgid === pid && !seen.has(p.pid)) queue.push(p.pid);
  }
  return [...seen].map((pid) => /** @type {TreeProcess} */ (all.get(pid))).filter((p) => p.state !== 'Z');
}

/**
 * Ends `root`'s whole tree with SIGKILL: each round stops every process found (so none forks
 * while the tree is read), then kills them; rounds go on until none is found (bounded). `except`
 * names pids never signalled (the caller's own). Returns the pids signalled.
 * @param {number} root @param {{ group?: boolean, except?: readonly number[] }} [options] @returns {number[]}
 */
export function killTree(root, options = {}) {
  const except = new Set([process.pid, ...(options.except ?? [])]);
  /** @type {Set<number>} */
  const signalled = new Set();
  for (let round = 0; round < 20; round++) {
    const found = processTree(root, options).filter((p) => !except.has(p.pid));
    if (found.length === 0) break;
    for (const p of found) signal(p.pid, 'SIGSTOP');
    for (const p of found) {
      signal(p.pid, 'SIGKILL');
      signalled.add(p.pid);
    }
    if (options.group) signal(-root, 'SIGKILL');
  }
  // SIGKILL is delivered, not done: wait (bounded) until each is gone or a zombie, so that a
  // caller told "stopped" finds nothing of the tree still running.
  const deadline = Date.now() + 2000;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while ([...signalled].some(alive) && Date.now() < deadline) Atomics.wait(pause, 0, 0, 5);
  return [...signalled];
}

/** Whether any thread of `pid` is running or runnable (state R in /proc/<pid>/task/<tid>/stat). @param {number} pid */
function threadRunning(pid) {
  let tids = [];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return false;
  }
  for (const tid of tids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'R') return true;
    } catch {}
  }
  return false;
}

/** @param {number} pid */
function alive(pid) {
  const p = readProcess(pid);
  return p !== undefined && p.state !== 'Z' && p.state !== 'X';
}

/** @param {number} pid @param {NodeJS.Signals} name */
function signal(pid, name) {
  try {
    process.kill(pid, name);
  } catch {}
}

/**
 * One line on what a tree is doing now: each process's command and whether it is computing
 * (it used the CPU for most of `sampleMs`) or waiting; processes matching `hide` left out.
 * @param {number} root @param {{ group?: boolean, sampleMs?: number, hide?: RegExp }} [options]
 * @returns {Promise<string>}
 */
export async function describeTree(root, options = {}) {
  const first = new Map(processTree(root, options).map((p) => [p.pid, p]));
  const runningFirst = new Set([...first.keys()].filter(threadRunning));
  const sampleMs = options.sampleMs ?? 300;
  await new Promise((r) => setTimeout(r, sampleMs));
  const hz = 100; // USER_HZ: clock ticks a second on Linux
  const parts = [];
  for (const p of processTree(root, options)) {
    if (options.hide?.test(p.command)) continue;
    const before = first.get(p.pid);
    const used = before ? ((p.ticks - before.ticks) * 1000) / hz : 0;
    // A busy loop on a shared machine may get a fraction of a core: a quarter of the sample, or
    // running at either look, is computing. Any thread's state counts: a worker thread's busy
    // loop is runnable while the main thread waits on it (and on a loaded machine it gets too
    // little of a core for its ticks to say so).
    const busy = used >= sampleMs / 4 || runningFirst.has(p.pid) || threadRunning(p.pid);
    const command = p.command.length > 80 ? `${p.command.slice(0, 77)}…` : p.command;
    parts.push(`${busy ? 'computing' : p.state === 'T' ? 'stopped' : 'waiting'}: ${command} (pid ${p.pid})`);
  }
  if (parts.length === 0) return 'no process of the agent was left';
  const shown = parts.slice(0, 4).join('; ');
  return parts.length > 4 ? `${shown}; and ${parts.length - 4} more` : shown;
}
