import { defineConfig } from 'vitest/config';

// Every test file removes the temp folders it made (tempDir, test/support/temp.ts) when it is done.
const setupFiles = ['test/support/remove-temp-dirs.ts'];

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          // The fast inner loop (`npm run test:unit`): test/unit mirrors src/ and needs no k6, no
          // dist/, no browser and no network (GitHub through nock). Every core runs a worker.
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          setupFiles,
          maxWorkers: '100%',
          // One module graph per worker, not per file: about a third less wall time (imports were a
          // third of it). Safe here: no test mocks modules or globals, and nock is set up per file.
          isolate: false,
          // Projects with different maxWorkers run one after the other: unit first, it fails fast.
          sequence: { groupOrder: 0 },
          testTimeout: 30_000,
        },
      },
      {
        test: {
          // Real processes: k6 (test/e2e, test/faults, test/equivalence, test/examples), the bundled
          // actions (test/actions), Chromium (test/browser), the linters and the packed package.
          name: 'core',
          include: ['test/**/*.test.ts'],
          exclude: [
            'test/unit/**',
            'test/kubernetes/**',
            'test/cluster/**',
            'test/faults/kubernetes.test.ts',
            'node_modules/**',
          ],
          globalSetup: ['test/support/global-setup.ts'],
          setupFiles,
          // Real k6 processes on 2 cores: keep them in few workers and give them time.
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
      {
        test: {
          // Against a real control plane (test/cluster): started once, files one after another.
          name: 'cluster',
          // With the Kubernetes rows of the fault table (test/faults/table.ts).
          include: ['test/kubernetes/**/*.test.ts', 'test/faults/kubernetes.test.ts'],
          globalSetup: ['test/support/global-setup.ts', 'test/support/cluster-setup.ts'],
          setupFiles,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
          testTimeout: 120_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
