// Temporary re-export for src/cli.ts (S1's file) until the merge fixes its import.
export * from '../render/markdown.ts';
