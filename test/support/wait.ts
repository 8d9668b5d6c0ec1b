/**
 * Resolves once `condition()` holds, checking every `intervalMs`; throws, failing the test, when
 * it still does not hold after `timeoutMs` of real time. `what` names the awaited event in the error.
 */
export async function waitFor(
  condition: () => boolean,
  what: string,
  { timeoutMs = 5000, intervalMs = 10 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
