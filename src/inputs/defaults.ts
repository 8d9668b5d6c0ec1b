import { PINNED_K6_VERSION } from '../k6/binary.ts';

/**
 * Every input default in one place, for the CLI, the run, report and root actions. The action.yml
 * files state the same defaults for users (test/docs checks them against these).
 */
export const DEFAULTS = {
  /** Number of runners N. */
  runners: 1,
  /** Where the result JSON goes (CLI `--out`, action `result-path`; the report's `result`). */
  resultPath: 'k6-distributed-result.json',
  /** How long runners may take to reach status 4, in s. */
  startTimeoutS: 300,
  /** Time allowed beyond the test's totalDuration, in s. */
  graceS: 120,
  /** Seconds between progress lines. */
  progressIntervalS: 10,
  /** Seconds Pods may stay unscheduled before the run fails. */
  scheduleTimeoutS: 120,
  /** The run action's backend. */
  backend: 'kubernetes',
  /** The CLI's backend: k6 processes on this machine. */
  cliBackend: 'local',
  /** The default runner image: the k6 release this project pins. */
  runnerImage: `grafana/k6:${PINNED_K6_VERSION.replace(/^v/, '')}`,
  /**
   * The image of each runner Pod's interval receiver (a Node program, latency per interval):
   * Node 24, Debian slim; `none` turns the receiver off.
   */
  intervalReceiverImage: 'node:24-slim',
  /** How runner Pods are spread over nodes. */
  spread: 'one-per-node',
  /** When the run's Kubernetes objects are deleted. */
  cleanup: 'always',
  /** Whether a step writes a job summary. */
  jobSummary: true,
  /** Whether the root action reports after the run. */
  report: true,
  /** What the report action does. */
  mode: 'auto',
  /** The user key: one comment, one baseline and one bundle per key. */
  key: 'default',
  /** Whether a gated regression fails the step. */
  failOnRegression: true,
  /** Whether an inconclusive verdict (intervals straddle a tolerance, or a saturated generator) fails the step. */
  failOnInconclusive: false,
  /** Login of the account the default token comments as. */
  commentAuthor: 'github-actions[bot]',
  /** Successful base-branch runs the report reads for the trend and the between-run noise. */
  historyRuns: 10,
  /** When the report reads the history branch: to fill in runs whose artifacts expired. */
  historyBranchRead: 'fallback',
  /** Runs kept per key in the history branch. */
  historyMaxRuns: 500,
} as const;
