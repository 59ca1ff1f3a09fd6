// The OS sandbox on its own (no replay): what a process tree inside can and cannot reach, checked
// against sentinels that see the real world. Needs bubblewrap with user namespaces (skipped
// where the machine has none; detection says why).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseIsolation, detectIsolation } from '../../sandbox/os/detect.js';
import { ownPorts } from '../../sandbox/os/listening.mjs';
import { type OsSandbox, openOsSandbox } from '../../sandbox/os/sandbox.js';
import { parseTraceLine } from '../../sandbox/os/trace.js';
import { ownChildren } from '../support/processes.js';
import { realDir, type Sentinels, startSentinels } from './helpers.js';

const hasBwrap = detectIsolation().level === 'bwrap';

async function run(box: OsSandbox, script: string, env: Record<string, string> = {}) {
  const out: Buffer[] = [];
  const onData = (d: Buffer) => out.push(d);
  box.child.stdout?.on('data', onData);
  box.child.stderr?.on('data', onData);
  box.child.stdout?.resume();
  box.child.stderr?.resume();
  const proc = box.spawn(['sh', '-c', script], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env },
    stdio: 'inherit',
    trace: true,
  });
  const exit = await proc.exit;
  await new Promise((r) => setTimeout(r, 50));
  box.child.stdout?.off('data', onData);
  box.child.stderr?.off('data', onData);
  return { ...exit, output: Buffer.concat(out).toString('utf8') };
}

describe.skipIf(!hasBwrap)('OS sandbox (bubblewrap)', () => {
  let sentinels: Sentinels;
  let box: OsSandbox;
  let real: { dir: string; remove(): Promise<void> };
  let world: { dir: string; remove(): Promise<void> };
  let copy: { dir: string; remove(): Promise<void> };

  beforeAll(async () => {
    real = await realDir('os-');
    world = await realDir('world-');
    copy = await realDir('copy-');
    sentinels = await startSentinels(real.dir);
    box = await openOsSandbox({
      isolation: chooseIsolation('bwrap'),
      cwd: process.cwd(),
      writable: [{ source: copy.dir, target: world.dir }],
      hosts: ['db.internal'],
      files: { 'hello.txt': 'handed in\n' },
    });
  });
  afterAll(async () => {
    await box?.close();
    await sentinels?.close();
    await real?.remove();
    await world?.remove();
    await copy?.remove();
  });

  it('reaches no sentinel by TCP (IPv4, IPv6), UDP or a Unix socket, and names the attempts', async () => {
    const s = sentinels;
    const r = await run(
      box,
      [
        `curl -s -m 3 http://127.0.0.1:${s.port}/ ; echo curl=$?`,
        `curl -s -m 3 -g 'http://[::1]:${s.port6}/' ; echo curl6=$?`,
        `wget -q -T 3 -O - http://127.0.0.1:${s.port}/ ; echo wget=$?`,
        `python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:${s.port}/', timeout=3)" 2>/dev/null; echo py=$?`,
        `python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('${s.socketPath}')" 2>/dev/null; echo unix=$?`,
        `node -e "require('net').connect('${s.socketPath}').on('error', e => { console.log('node-unix=' + e.code); })"`,
        `python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('192.0.2.1', 53))" 2>/dev/null; echo udp=$?`,
        'curl -s -m 3 http://192.0.2.1:80/ ; echo public=$?',
      ].join('\n'),
    );
    expect(s.hits()).toBe(0);
    expect(r.output).toMatch(/curl=7/);
    expect(r.output).toMatch(/node-unix=EACCES/);
    expect(r.output).not.toMatch(/unix=0/);
    const targets = box.attempts.map((a) => `${a.kind} ${a.target}`);
    expect(targets).toContain(`connect 192.0.2.1:80`);
    expect(targets).toContain(`send 192.0.2.1:53`);
    expect(targets.some((t) => t === `connect 127.0.0.1:${s.port}`)).toBe(true);
    expect(box.attempts.find((a) => a.target === '192.0.2.1:80')?.command).toMatch(/curl/);
  });

  it('knows a refused attempt made just before a process exits by the time the exit is reported', async () => {
    for (let i = 0; i < 5; i++) {
      const target = `192.0.2.${10 + i}:81`;
      const before = box.attempts.length;
      // A burst of refused connects, the one looked for last: strace's FIFO has a backlog at exit.
      const burst = `import socket\nfor i in range(3000):\n  s = socket.socket(); s.setblocking(False)\n  try: s.connect(('192.0.2.1', 1000 + i % 50))\n  except OSError: pass\n  s.close()\n`;
      const proc = box.spawn(['sh', '-c', `python3 -c "${burst}"; curl -s -m 2 http://${target}/ ; exit 3`], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        stdio: 'inherit',
        trace: true,
      });
      const exit = await proc.exit;
      expect(exit.code).toBe(3);
      // No wait: strace's last lines are read to the end before the exit is sent.
      expect(box.attempts.slice(before).map((a) => `${a.kind} ${a.target}`)).toContain(`connect ${target}`);
    }
  });

  it('closes the listeners it handed out when it closes: a forgotten one kept the process alive', async () => {
    const other = await openOsSandbox({ isolation: chooseIsolation('bwrap'), cwd: process.cwd() });
    const forgotten = [await other.listen(), await other.listen(), await other.listen(40123)];
    expect(forgotten.map((l) => l.listening)).toEqual([true, true, true]);
    await other.close();
    expect(forgotten.map((l) => l.listening)).toEqual([false, false, false]);
  });

  it("keeps its own listeners off the ports the agent's targets usually have (the ephemeral range)", async () => {
    // An agent's connection to a port the kernel picked outside (a test server, a recorded
    // service) reached the launcher's listener inside when the kernel inside picked the same
    // number for it: the agent's "blocked" connection hung its process, a service's port was taken.
    const ports = await Promise.all(Array.from({ length: 20 }, () => box.listen()));
    for (const listener of ports) {
      expect(listener.insidePort).toBeGreaterThanOrEqual(20_000);
      expect(listener.insidePort).toBeLessThan(30_000);
      listener.close();
    }
    expect(new Set(ports.map((l) => l.insidePort)).size).toBe(ports.length);
  });

  it('writes no real file; the writable world and a private /tmp take writes', async () => {
    const s = sentinels;
    const r = await run(
      box,
      [
        `echo hacked > ${s.file} ; echo w=$?`,
        `truncate -s 0 ${s.file} ; echo t=$?`,
        `chmod 777 ${s.file} ; echo c=$?`,
        `touch -d 2001-01-01 ${s.file} ; echo u=$?`,
        `rm -f ${s.file} ; echo r=$?`,
        `mkdir ${s.file}.d ; echo m=$?`,
        'echo private > /tmp/x && cat /tmp/x',
        `echo kept > ${world.dir}/agent-wrote.txt && echo world=ok`,
        'cat /run/tapedeck/hello.txt',
        'umount /tmp 2>/dev/null; echo umount=$?',
        'mount -o remount,rw / 2>/dev/null; echo remount=$?',
      ].join('\n'),
    );
    expect(readFileSync(s.file, 'utf8')).toBe(s.fileContent);
    const { statSync, existsSync } = await import('node:fs');
    expect(statSync(s.file).mode & 0o777).toBe(0o644);
    expect(existsSync(`${s.file}.d`)).toBe(false);
    expect(r.output).toMatch(/private/);
    expect(r.output).toMatch(/world=ok/);
    expect(r.output).toMatch(/handed in/);
    expect(r.output).not.toMatch(/umount=0/);
    expect(r.output).not.toMatch(/remount=0/);
    // What the agent wrote at the world's path landed in the copy, not in the real folder.
    expect(readFileSync(`${copy.dir}/agent-wrote.txt`, 'utf8')).toBe('kept\n');
    expect(existsSync(`${world.dir}/agent-wrote.txt`)).toBe(false);
    expect(box.attempts.some((a) => a.kind === 'write' && a.target === s.file)).toBe(true);
  });

  it('sees and signals no outside process', async () => {
    const s = sentinels;
    const r = await run(box, `kill -TERM ${s.pid} 2>/dev/null; echo k=$?; ls /proc | grep -c '^[0-9]'`);
    expect(r.output).toMatch(/k=1/);
    await new Promise((r) => setTimeout(r, 200));
    expect(s.signalled()).toBe(false);
    expect(box.attempts.some((a) => a.kind === 'signal' && a.target === `pid ${s.pid}`)).toBe(true);
  });

  it('maps named hosts to loopback and serves listeners opened inside from outside', async () => {
    const listener = await box.listen();
    let served = 0;
    listener.on('connection', (socket) => {
      served++;
      socket.end('HTTP/1.1 200 OK\r\ncontent-length: 7\r\nconnection: close\r\n\r\noutside');
    });
    const r = await run(box, `getent hosts db.internal; curl -s http://127.0.0.1:${listener.insidePort}/`);
    expect(r.output).toMatch(/127\.0\.0\.1\s+db\.internal/);
    expect(r.output).toMatch(/outside/);
    expect(served).toBe(1);
    listener.close();
  });

  it('runs a service inside that the outside reaches only through connect()', async () => {
    const service = box.spawn(
      [
        process.execPath,
        '-e',
        "require('http').createServer((q, r) => r.end('svc')).listen(0, '127.0.0.1', function () { console.log(this.address().port) })",
      ],
      { env: { PATH: process.env.PATH ?? '' }, stdio: 'pipe' },
    );
    const port = await new Promise<number>((resolve) =>
      service.once('stdout', (d: Buffer) => resolve(Number(String(d).trim()))),
    );
    const socket = await box.connect(port);
    socket.write('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    const reply = await new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (d) => {
        text += String(d);
      });
      socket.on('end', () => resolve(text));
    });
    expect(reply).toMatch(/svc$/);
    service.kill('SIGKILL');
    expect((await service.exit).signal).toBe('SIGKILL');
  });
});

describe.skipIf(!hasBwrap)('OS sandbox closing', () => {
  it('leaves no process of its own once close() resolves: launcher and network keeper exited and reaped', async () => {
    const before = ownChildren();
    for (let i = 0; i < 10; i++) {
      const box = await openOsSandbox({ isolation: chooseIsolation('bwrap'), cwd: process.cwd() });
      // Every other round, an agent still running when the sandbox closes (a replay cut short).
      if (i % 2 === 1)
        box.spawn(['sleep', '30'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdio: 'pipe' });
      expect(ownChildren().length).toBeGreaterThan(before.length);
      await box.close();
      expect(ownChildren()).toEqual(before);
    }
  }, 120_000);
});

describe.skipIf(!hasBwrap)("OS sandbox with the run's CA in place of the system bundles", () => {
  it('names no write to a bundle it stood in for (a program appending its own CA), and still names others', async () => {
    const real = await realDir('ca-');
    const box = await openOsSandbox({
      isolation: chooseIsolation('bwrap'),
      cwd: process.cwd(),
      caPem: '-----BEGIN CERTIFICATE-----\nnot a real one\n-----END CERTIFICATE-----\n',
    });
    try {
      const outside = path.join(real.dir, 'outside.txt');
      writeFileSync(outside, 'as it was\n');
      const r = await run(
        box,
        `echo extra >> /etc/ssl/certs/ca-certificates.crt; echo bundle=$?; echo extra >> ${outside}; echo outside=$?`,
      );
      // Both writes are refused (nothing real changes); only the one to the real disk is an attempt.
      expect(r.output).not.toMatch(/bundle=0/);
      expect(r.output).not.toMatch(/outside=0/);
      expect(readFileSync(outside, 'utf8')).toBe('as it was\n');
      const writes = box.attempts.filter((a) => a.kind === 'write').map((a) => a.target);
      expect(writes).toContain(outside);
      expect(writes).not.toContain('/etc/ssl/certs/ca-certificates.crt');
    } finally {
      await box.close();
      await real.remove();
    }
  });
});

describe('strace lines', () => {
  it('take a connect under way to a listener of the sandbox for no refusal, even once it has closed', () => {
    const line = (addr: string, port: number, error = 'EINPROGRESS (Operation now in progress)') =>
      addr.includes(':')
        ? `8     connect(3, {sa_family=AF_INET6, sin6_port=htons(${port}), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "${addr}", &sin6_addr), sin6_scope_id=0}, 28) = -1 ${error}`
        : `8     connect(19, {sa_family=AF_INET, sin_port=htons(${port}), sin_addr=inet_addr("${addr}")}, 16) = -1 ${error}`;
    const range = { low: 32768, high: 60999 };
    const listensNow = (port: number) => port === 8080;
    expect(
      ownPorts(
        [
          line('127.0.0.1', 40123), // a port-0 listener of the tree, closed since: the kernel's range
          line('::1', 41000),
          line('127.0.0.1', 8080), // listening as the line is read
          line('127.0.0.1', 5432), // nothing serves it: a refusal still
          line('10.0.0.7', 40124), // not loopback
          line('127.0.0.1', 40125, 'ECONNREFUSED (Connection refused)'), // refused at once
        ],
        range,
        listensNow,
      ),
    ).toEqual([40123, 41000, 8080]);
  });

  it('reads refused connects, sends, signals and writes, and ignores noise', () => {
    expect(
      parseTraceLine(
        '7     connect(5, {sa_family=AF_INET, sin_port=htons(81), sin_addr=inet_addr("1.2.3.4")}, 16) = -1 ENETUNREACH (Network is unreachable)',
      ),
    ).toMatchObject({ pid: 7, kind: 'connect', target: '1.2.3.4:81' });
    expect(
      parseTraceLine(
        '8     connect(3, {sa_family=AF_INET6, sin6_port=htons(5432), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = -1 ECONNREFUSED (Connection refused)',
      ),
    ).toMatchObject({ kind: 'connect', target: '[::1]:5432' });
    expect(
      parseTraceLine(
        '6     openat(AT_FDCWD, "/work/y", O_WRONLY|O_CREAT|O_TRUNC, 0666) = -1 EROFS (Read-only file system)',
      ),
    ).toMatchObject({ kind: 'write', target: '/work/y' });
    expect(
      parseTraceLine('8     openat(AT_FDCWD, "/dev/tty", O_RDWR|O_NONBLOCK) = -1 ENXIO (No such device)'),
    ).toBeUndefined();
    expect(parseTraceLine('8     openat(AT_FDCWD, "/x", O_RDONLY) = -1 ENOENT (No such file)')).toBeUndefined();
    // With the process named (strace -Y), a name with spaces or '>' in it too.
    for (const name of ['curl', 'my tool', 'a>b'])
      expect(
        parseTraceLine(
          `7<${name}> connect(5, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("192.0.2.1")}, 16) = -1 EACCES (Permission denied)`,
        ),
      ).toMatchObject({ pid: 7, kind: 'connect', target: '192.0.2.1:80' });
    expect(parseTraceLine('9     kill(4242, SIGTERM) = -1 ESRCH (No such process)')).toMatchObject({
      kind: 'signal',
      target: 'pid 4242',
    });
  });
});
