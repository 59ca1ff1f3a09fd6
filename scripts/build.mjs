// `npm run build`: the published JavaScript. esbuild bundles src/ into dist/ (one entry per
// package export plus the CLI, shared code in dist/chunks/, each command's code in its own chunk
// so the CLI loads only what the command being run needs); tsc writes the .d.ts files to
// dist/types/. The preloads (*.mjs) are not built: they ship as they are, at the same paths, and
// their hand-written types (*.d.mts) are copied beside the .d.ts files that import them.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/**
 * Pure-JS dependencies on the start-up path, bundled in: Node's loader resolving and reading
 * their files one by one costs more than their code (zod alone: +50 ms unbundled, +20 ms bundled).
 * asn1js encodes the OS sandbox proxy's CA at every sandboxed replay: imported from ESM as
 * CommonJS, Node scanned each of its files for its exports and for its module format first;
 * bundled, it loads in its own lazy chunk.
 * Every other dependency stays an import of the installed package (WASM, native code, data files,
 * or not needed at start-up).
 */
const BUNDLED = new Set(['zod', 'commander', 'yaml', 'diff', 'gpt-tokenizer', 'asn1js']);

/** Entry points: the package's exports and the CLI (names are the files in dist/). */
const entryPoints = {
  cli: 'src/cli/main.ts',
  index: 'src/index.ts',
  vitest: 'src/vitest/index.ts',
  config: 'src/config/index.ts',
  // The recording thread of in-process record() (src/record/session-thread.ts starts it).
  'session-worker': 'src/record/session-worker.ts',
};
for (const [name, file] of Object.entries(entryPoints)) if (!existsSync(join(root, file))) delete entryPoints[name];

const external = Object.keys({
  ...pkg.dependencies,
  ...pkg.devDependencies,
  ...pkg.peerDependencies,
  ...pkg.optionalDependencies,
})
  .filter((name) => !BUNDLED.has(name))
  .flatMap((name) => [name, `${name}/*`]);

/**
 * zod's `z` namespace re-exports every one of its ~50 error-message locales, which keeps them all in
 * the bundle (about a third of zod's code, evaluated at every start). tapedeck uses only English.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: join(root, 'node_modules/zod/v4/locales'),
    }));
  },
};

rmSync(join(root, 'dist'), { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints,
  outdir: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  jsx: 'automatic',
  external,
  // Bundled CommonJS (commander) requires Node built-ins; give ESM chunks a real `require`.
  banner: {
    js: "import { createRequire as __tapedeckCreateRequire } from 'node:module';\nconst require = __tapedeckCreateRequire(import.meta.url);",
  },
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'linked',
  sourcemap: 'linked',
  sourcesContent: false,
  metafile: true,
  plugins: [zodEnglishOnly],
  logLevel: 'warning',
});
if (process.argv.includes('--meta')) process.stdout.write(JSON.stringify(result.metafile));

// The tokenizer's rank table as typed arrays (src/ledger/o200k.ts), so `ledger` need not parse
// gpt-tokenizer's text file at each start.
const tableScript = join(root, 'dist/.write-rank-table.mjs');
await build({
  absWorkingDir: root,
  stdin: {
    contents:
      "import { writeRankTable, RANK_TABLE_FILE } from './src/ledger/o200k.ts'; import { packagePath } from './src/package.ts'; writeRankTable(packagePath(RANK_TABLE_FILE));",
    resolveDir: root,
    loader: 'ts',
  },
  outfile: tableScript,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  logLevel: 'warning',
});
execFileSync(process.execPath, [tableScript], { cwd: root, stdio: 'inherit' });
rmSync(tableScript);

execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
  cwd: root,
  stdio: 'inherit',
});
// tsc leaves a .mjs module's .d.mts where it is: a declaration importing the module (sandbox/index.d.ts
// re-exports from preload/shared-file-ops.mjs) finds its types only if they sit beside it in dist/types.
for (const dir of ['sandbox', 'src']) {
  for (const entry of readdirSync(join(root, dir), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.d.mts')) continue;
    // parentPath from Node 20.12; path before it.
    const from = join(entry.parentPath ?? entry.path, entry.name);
    const to = join(root, 'dist/types', from.slice(root.length + 1));
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(from, to);
  }
}
