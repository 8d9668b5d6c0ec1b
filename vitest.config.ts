import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // End-to-end tests run real k6 processes on 2 cores: keep them in few workers and give them time.
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 300_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'core',
          include: ['test/**/*.test.ts'],
          exclude: ['test/kubernetes/**', 'test/cluster/**', 'node_modules/**'],
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          // Against a real control plane (test/cluster): started once, files one after another.
          name: 'cluster',
          include: ['test/kubernetes/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts', 'test/support/cluster-setup.ts'],
          fileParallelism: false,
        },
      },
    ],
  },
});
