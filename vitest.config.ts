import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'src/**/*.test.ts',
      'sandbox/**/*.test.ts',
      'tui/**/*.test.{ts,tsx}',
      'test/**/*.test.{ts,tsx}',
      'examples/**/*.test.ts',
    ],
    // Generous: CI runs every file two at a time on a 2-core machine; a test that takes 5 s alone
    // took over 60 s when the machine was loaded. A real hang still fails, later.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // A private TAPEDECK_HOME (the seal key) for the whole run: see the file.
    globalSetup: ['test/support/seal-home.ts'],
    pool: 'forks',
    maxWorkers: 2,
  },
});
