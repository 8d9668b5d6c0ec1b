import { type Clock, realClock } from '../../clock.ts';

/**
 * The Kubernetes backend's time: a {@link Clock} (epoch ms; waits the run awaits) with timers for
 * what the backend does in the background: re-checking a runner's timeouts every second, following
 * a runner's k6 log shortly after its start, giving up on a runner's start line. A timer can be
 * cancelled, and the real one never keeps the process alive by itself (Node's `unref`), so a run's
 * process ends as soon as its work does, however long a timer had still to go (`Clock.sleep`
 * cannot be cancelled, and a pending one holds the process). Unit tests pass a fake one.
 */
export interface BackendClock extends Clock {
  /** Calls `fn` once after `ms` ms, unless the function it returns is called first. */
  timer(ms: number, fn: () => void): () => void;
}

/** The real {@link BackendClock}: {@link realClock}, and `setTimeout` timers that are `unref`ed. */
export const realBackendClock: BackendClock = {
  now: realClock.now,
  sleep: realClock.sleep,
  timer: (ms, fn) => {
    const timer = setTimeout(fn, Math.max(0, ms));
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/**
 * Calls `fn` every `ms` ms on `clock`'s timers until the returned function is called.
 * @returns the function that stops it.
 */
export function every(clock: BackendClock, ms: number, fn: () => void): () => void {
  let cancel = () => {};
  const arm = () => {
    cancel = clock.timer(ms, () => {
      arm();
      fn();
    });
  };
  arm();
  return () => cancel();
}
