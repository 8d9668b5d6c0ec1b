/**
 * The time source of the orchestration. Every stage reads the time and waits only through a
 * `Clock`, so unit tests drive the barrier timeout, the deadline and the stop timeout with a fake
 * clock in milliseconds of real time.
 */
export interface Clock {
  /** Epoch time in ms, with sub-ms resolution where the platform has it (start skew is measured with it). */
  now(): number;
  /**
   * Resolves after `ms` ms. With `signal`, an abort ends the wait early (it resolves then) and
   * releases its timer: a sleep that lost a race must not keep the process alive.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock: `performance.timeOrigin + performance.now()` (monotonic, sub-ms) and `setTimeout`. */
export const realClock: Clock = {
  now: () => performance.timeOrigin + performance.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    }),
};
