import { afterAll } from 'vitest';
import { removeTempDirs } from './temp.ts';

// A setup file of every vitest project: it runs before each test file, so each file removes the
// folders it made (tempDir in test/support/temp.ts) once its tests are done.
afterAll(removeTempDirs);
