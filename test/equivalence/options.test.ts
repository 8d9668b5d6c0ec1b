import { CASES } from './cases.ts';
import { equivalenceSuite } from './suite.ts';

// The second half of the k6-equivalence table (thresholds, tags, options, exit codes, outputs).
equivalenceSuite(CASES.slice(Math.ceil(CASES.length / 2)));
