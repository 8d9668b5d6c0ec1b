import { BARRIER_PORT, REST_PORT } from '../names.ts';

/**
 * The barrier container's side: the k6 script it runs beside each runner (polling the runner's REST
 * API on loopback, starting it at the scheduled instant), its k6 arguments, and the lines it prints
 * to its log, which the orchestrator follows (barrier/follow.ts) and reads (barrier/log.ts).
 */

/**
 * What the barrier container prints, one line each, to its stdout (the container's log, which the
 * orchestrator follows): `k6d-ready <ms>` once the runner is at status 4 (PausedBeforeRun) or
 * later; `k6d-clock <ms>` at each poll of a {@link VUS_PERIOD_MS} period from then to the start, at
 * most {@link CLOCK_LINES} times (the orchestrator bounds the gap between its clock and the node's
 * by the least delay of these lines); `k6d-started <sent ms> <ms>` once it un-paused the runner
 * itself at the start time set in its mailbox ({@link BARRIER_PORT}): when it sent the `PATCH` and
 * when k6 confirmed it; while its test runs, `k6d-vus <ms> <vus>` at its poll of each
 * {@link VUS_PERIOD_MS} period of the wall clock when the active VU count differs from the last one
 * printed (the first is always printed); `k6d-end <ms> <status>` once its test has ended (status 9
 * Ended, 10 Interrupted, 11 MarkedAsFailed), after which it exits 0. `<ms>` is the node's epoch ms.
 */
export const BARRIER_LINE = {
  ready: 'k6d-ready',
  clock: 'k6d-clock',
  started: 'k6d-started',
  vus: 'k6d-vus',
  end: 'k6d-end',
} as const;

/**
 * How long a barrier container waits, once its runner is ready, for the Pod's interval receiver to
 * listen (`K6D_RECEIVER_PORT` in its environment) before it says ready anyway, in ms: the receiver
 * starts beside k6, off the way to k6's start, and is then seldom the last; one that comes after
 * the start says so (receiver/main.ts), which costs the per-interval series only.
 */
export const RECEIVER_WAIT_MS = 10_000;

/** How many `k6d-clock` lines a barrier container prints at most (one a period while it waits). */
export const CLOCK_LINES = 10;

/**
 * How often a barrier container looks for its runner's end once the test can end (the `endsFrom`
 * instant in its mailbox, {@link barrierScript}), in ms.
 */
export const END_POLL_MS = 50;

/** How often a ready barrier container reads its mailbox for the start time, in ms. */
export const MAILBOX_POLL_MS = 100;

/**
 * The period of the VU samples the barrier container takes, in ms: twice per period at which k6
 * samples its own `vus` gauge (1 s, k6 v2.2.0 `internal/execution/scheduler.go`), as the local
 * monitor's status poll (src/run/status-poll.ts). Aligned to the wall clock, so that the samples of
 * every runner fall in the same periods.
 */
export const VUS_PERIOD_MS = 500;

/**
 * The barrier container's `k6` arguments before its script: no progress, no summary, its lines
 * (console.log) alone and unadorned on stdout, the container's log the backend follows, and its
 * REST API (its start-time mailbox) on `address`.
 * @param address `host:port` of its REST API; in the Pod `0.0.0.0:`{@link BARRIER_PORT}, where the pod proxy reaches it.
 */
export function barrierRunArgs(address = `0.0.0.0:${BARRIER_PORT}`): string[] {
  return [
    'run',
    '--quiet',
    '--summary-mode=disabled',
    '--no-usage-report',
    '--log-output=stdout',
    '--log-format=raw',
    '--address',
    address,
  ];
}

/**
 * The barrier container's k6 script: polls the runner's `GET /v1/status` on 127.0.0.1 every
 * 100 ms until it is ready (status 4), then at the start of each {@link VUS_PERIOD_MS} period of
 * the wall clock (two polls a second, as the local monitor's status poll: the end of the test is
 * seen within a period, and every runner samples its VUs at the start of the same periods). From
 * ready to the start it also reads its own mailbox ({@link BARRIER_PORT}) every
 * {@link MAILBOX_POLL_MS}: once a start time is there, it sleeps until that instant of the node's
 * clock and un-pauses the runner itself (`PATCH /v1/status` `paused: false` on loopback), so that
 * every runner starts at the same instant however long the orchestrator's requests take to go
 * through the API server. A runner started otherwise (the orchestrator's fallback through the pod
 * proxy) is seen at the next status poll. From the `endsFrom` instant in the mailbox (shortly
 * before the test can first end) it polls every {@link END_POLL_MS}, so its end is seen soon. It
 * prints {@link BARRIER_LINE} lines: ready, this node's clock while it waits, started, the VU count
 * while the test runs, and the end, when it exits 0. When the runner's REST API answered once and
 * then stays gone for 2 s (the runner exited), it fails (exit 108) instead. The loopback polls cost
 * the API server nothing; the orchestrator follows this container's log, one request per runner for
 * the whole run. With `K6D_RECEIVER_PORT` in its environment, it says ready only once the Pod's
 * interval receiver also answers on that port, or {@link RECEIVER_WAIT_MS} after the runner was.
 * @param port the runner's REST API port on 127.0.0.1 (a test runs it beside a local k6).
 * @param mailboxPort the barrier's own REST API port on 127.0.0.1 ({@link barrierRunArgs}).
 */
export function barrierScript(port: number = REST_PORT, mailboxPort: number = BARRIER_PORT): string {
  return `import http from 'k6/http';
import exec from 'k6/execution';
import { sleep } from 'k6';
export const options = {
  scenarios: { barrier: { executor: 'shared-iterations', vus: 1, iterations: 1, maxDuration: '8760h' } },
};
const STATUS = 'http://127.0.0.1:${port}/v1/status';
const RECEIVER = __ENV.K6D_RECEIVER_PORT ? 'http://127.0.0.1:' + __ENV.K6D_RECEIVER_PORT + '/' : '';
let receiverSince = 0;
function receiverUp(now) {
  if (!RECEIVER) return true;
  receiverSince = receiverSince || now;
  if (now - receiverSince > ${RECEIVER_WAIT_MS}) return true;
  return http.get(RECEIVER, { timeout: '500ms' }).status > 0;
}
const MAILBOX = 'http://127.0.0.1:${mailboxPort}/v1/setup';
// What the orchestrator put in this k6's setup data: the start instant (epoch ms), and when the
// test can first end (then its end is looked for every ${END_POLL_MS} ms); undefined before.
function mailbox() {
  const r = http.get(MAILBOX, { timeout: '2s' });
  const m = r.status === 200 ? r.json('data.attributes.data') : undefined;
  return m && typeof m.startAt === 'number' ? m : undefined;
}
// The start of the next period of the wall clock, a few ms in (so that a sample lands in it).
function nextPeriod(now) {
  return (Math.floor(now / ${VUS_PERIOD_MS}) + 1) * ${VUS_PERIOD_MS} + 5;
}
export default function () {
  let seen = false;
  let goneSince = 0;
  let ready = false;
  let started = false;
  let endsFrom = Infinity;
  let clocks = 0;
  let statusDue = 0;
  let period = -1;
  let vus = -1;
  for (;;) {
    if (ready && !started) {
      const m = mailbox();
      if (m !== undefined) {
        if (typeof m.endsFrom === 'number') endsFrom = m.endsFrom;
        const wait = m.startAt - Date.now();
        if (wait > 0) sleep(wait / 1000);
        const sent = Date.now();
        const body = JSON.stringify({ data: { type: 'status', id: 'default', attributes: { paused: false } } });
        const r = http.patch(STATUS, body, { headers: { 'Content-Type': 'application/json' }, timeout: '2s' });
        const line = '${BARRIER_LINE.started} ' + sent + ' ' + Date.now();
        started = true;
        // Quiet while the test begins (on a shared node every runner begins at once): the line and
        // the next poll wait for the next period.
        sleep(Math.max(0, nextPeriod(Date.now()) - Date.now()) / 1000);
        // Refused (started already, or k6 failing): the orchestrator starts it through the pod proxy.
        if (r.status === 200) console.log(line);
        continue;
      }
      if (Date.now() < statusDue) {
        sleep(${MAILBOX_POLL_MS / 1000});
        continue;
      }
    }
    const r = http.get(STATUS, { timeout: '2s' });
    const now = Date.now();
    if (r.status === 200) {
      seen = true;
      goneSince = 0;
      const status = r.json('data.attributes.status');
      if (status >= 4 && !ready && receiverUp(now)) {
        ready = true;
        console.log('${BARRIER_LINE.ready} ' + now);
      } else if (ready && !started && status === 4 && clocks < ${CLOCK_LINES}) {
        // This node's clock, for the orchestrator to read its own against (the least delay counts).
        clocks++;
        console.log('${BARRIER_LINE.clock} ' + now);
      }
      if (status >= 5) started = true;
      if (status >= 9) {
        console.log('${BARRIER_LINE.end} ' + now + ' ' + status);
        return;
      }
      if (status >= 5 && Math.floor(now / ${VUS_PERIOD_MS}) !== period) {
        period = Math.floor(now / ${VUS_PERIOD_MS});
        const active = r.json('data.attributes.vus');
        if (active !== vus) {
          vus = active;
          console.log('${BARRIER_LINE.vus} ' + now + ' ' + vus);
        }
      }
    } else if (seen) {
      goneSince = goneSince || now;
      if (now - goneSince > 2000) exec.test.abort('the runner REST API went away');
    }
    statusDue = nextPeriod(Date.now());
    // Ready and not started: read the mailbox meanwhile; started: poll at the start of each period,
    // and more often once the test can end.
    if (!ready) sleep(0.1);
    else if (started) {
      const due = Date.now() >= endsFrom ? Math.min(statusDue, Date.now() + ${END_POLL_MS}) : statusDue;
      sleep(Math.max(0, due - Date.now()) / 1000);
    }
  }
}
`;
}
