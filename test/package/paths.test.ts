// Code that finds tapedeck's own files must work from src/ and from the bundle in dist/, where a
// path relative to the module (`new URL('./x.mjs', import.meta.url)`) points into dist/chunks/.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packagePath, packageRoot } from '../../src/package.js';
import { root } from '../cli/run-cli.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

describe('finding tapedeck’s own files', () => {
  it('no built module locates a file relative to itself: packagePath() instead', () => {
    const offenders = ['src', 'sandbox', 'tui']
      .flatMap((dir) => sources(join(root, dir)))
      .filter((file) => /new URL\([^)]*import\.meta\.url\)|import\.meta\.dirname/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    expect(offenders, 'use packagePath() from src/package.ts: the bundle moves modules into dist/chunks/').toEqual([]);
  });

  it('every file found through packagePath() ships in the package (package.json "files")', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { files: string[] };
    const globs = pkg.files.map(
      (g) =>
        new RegExp(
          `^${g
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*\*\//g, '\u0000')
            .replace(/\*/g, '[^/]*')
            .replace(/\u0000/g, '(.*/)?')}(/.*)?$`,
        ),
    );
    const always = ['package.json', 'README.md', 'LICENSE'];
    const used = ['src', 'sandbox', 'tui']
      .flatMap((dir) => sources(join(root, dir)))
      .flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/packagePath\('([^']+)'\)/g)].map((m) => m[1] as string),
      );
    expect(used.length).toBeGreaterThan(2);
    expect(used.filter((path) => !always.includes(path) && !globs.some((g) => g.test(path)))).toEqual([]);
  });

  it('packagePath is relative to the package root', () => {
    expect(packageRoot()).toBe(root);
    expect(packagePath('sandbox/preload/replay.mjs')).toBe(join(root, 'sandbox/preload/replay.mjs'));
  });
});
