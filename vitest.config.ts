import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/cluster/**', 'node_modules/**'],
    globalSetup: ['test/support/global-setup.ts'],
    // End-to-end tests run real k6 processes on 2 cores: keep them in few workers and give them time.
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
