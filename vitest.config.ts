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
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
