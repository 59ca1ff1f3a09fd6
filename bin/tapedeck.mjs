#!/usr/bin/env node
// The `tapedeck` command. Installed from npm it runs the built CLI (dist/cli.js: plain JavaScript,
// no TypeScript compiled at start-up). In a checkout of the repository it runs the TypeScript
// sources through tsx instead, so an edit is live without a rebuild; TAPEDECK_DIST=1 makes a
// checkout run dist/ too (what `npm run bench` measures).
import { existsSync } from 'node:fs';

const source = new URL('../src/cli/main.ts', import.meta.url);
if (process.env.TAPEDECK_DIST !== '1' && existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/cli.js');
}
