import { CASES } from './cases.ts';
import { equivalenceSuite } from './suite.ts';

// The first half of the k6-equivalence table (executors, metrics, setup, handleSummary, abortOnFail);
// two files so that the two vitest workers share the table.
equivalenceSuite(CASES.slice(0, Math.ceil(CASES.length / 2)));
