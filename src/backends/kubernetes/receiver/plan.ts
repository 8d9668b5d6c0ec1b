import type { Logger } from '../../../log.ts';
import type { RunPlan } from '../../../plan.ts';
import { receiverScript } from './script.ts';

/**
 * The plan and interval receiver program of a run: with a receiver image and a plan that pushes
 * (src/run/interval-receiver.ts), the receiver's program; else the plan without its pushes (nobody
 * would take them). A program that cannot be loaded is warned about and costs only the
 * per-interval latency. Never throws.
 * @param options.receiverImage the `interval-receiver-image` input (undefined: off).
 */
export async function receiverPlan(
  plan: RunPlan,
  options: { receiverImage?: string; log: Pick<Logger, 'warning'> },
): Promise<{ plan: RunPlan; receiverScript?: string }> {
  const without = { plan: { ...plan, intervalMetrics: undefined } };
  if (!plan.intervalMetrics || !options.receiverImage) return without;
  try {
    return { plan, receiverScript: await receiverScript() };
  } catch (error) {
    options.log.warning(
      `timeline: no latency per interval: the interval receiver's program: ${(error as Error).message}`,
    );
    return without;
  }
}
