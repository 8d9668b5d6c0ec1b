// Temporary re-export for files that still import the old path (S1's run pipeline); the lead drops it at merge.
export * from './result/result.ts';
