// @ts-check
// The preload of a sandboxed service (a user's API re-hosted by a replay), loaded with
// `node --import` through NODE_OPTIONS. It holds the service to the agent's isolation where no OS
// sandbox is available: the recorded fs root is a memfs volume seeded from the replay's start
// world (no write reaches the disk), and every connection but the sandbox database (through the
// relay, whatever address the service names) and the service's own port is refused. Refused
// connections are written to the report file the replayer reads.
import fs from 'node:fs';
import path from 'node:path';
import { installNetworkGuard } from './network-guard.mjs';
import { installFsSandbox } from './replay-fs.mjs';
import { installUnixOverLoopback } from './shared-unix-sockets.mjs';

// Taken before the fs sandbox is installed. writeFileSync of a string goes straight to the disk
// (Node's utf8 fast path); appendFileSync would go through the patched openSync into the volume.
const realWriteFileSync = fs.writeFileSync;
const realReadFileSync = fs.readFileSync;

function installService(config) {
  const lines = [];
  const report = (line) => {
    lines.push(JSON.stringify(line));
    try {
      realWriteFileSync.call(fs, config.reportFile, `${lines.join('\n')}\n`);
    } catch {}
  };
  if (config.fsRoot) {
    /** @type {Record<string, { mode: number, data: Buffer }>} */
    const files = {};
    const seed = config.seedFile ? JSON.parse(realReadFileSync(config.seedFile, 'utf8')) : { files: [] };
    for (const [abs, mode, b64] of seed.files) files[abs] = { mode, data: Buffer.from(b64, 'base64') };
    installFsSandbox({
      root: config.fsRoot,
      files,
      onOutsideWrite: () => {},
      onRefused: (what) => report({ t: 'blocked', pid: process.pid, target: `write ${what}` }),
      // The OS sandbox's private folders (MASKED in sandbox/os/sandbox.ts) are not the real disk.
      privateDirs: config.os ? ['/tmp', '/var/tmp', '/run', '/dev/shm'] : [],
    });
  }
  if (config.os) installUnixOverLoopback();
  installNetworkGuard(
    { hosts: config.allow ?? [], paths: [], unixOverLoopback: config.os === true },
    (target) => report({ t: 'blocked', pid: process.pid, target }),
    config.routes ?? [],
  );
}

const configPath = process.env.TAPEDECK_SERVICE_CONFIG;
const KEY = Symbol.for('tapedeck.service');
if (configPath && !globalThis[KEY]) {
  globalThis[KEY] = true;
  installService(JSON.parse(realReadFileSync(path.resolve(configPath), 'utf8')));
}
