/**
 * Where one pass of bench/scale-pass.ts spends its time, stage by stage, from a V8 CPU profile:
 *
 *   node bench/scale.ts --summaries /tmp/s1000 1000 > /tmp/thresholds.json
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --cpu-prof-interval 100 bench/scale-pass.ts \
 *     /tmp/s1000 1000 "$(cat /tmp/thresholds.json)" > /tmp/pass.json
 *   node bench/scale-profile.ts /tmp/prof/*.cpuprofile /tmp/pass.json [top=12]
 *
 * The pass prints its stage boundaries (`marksNs`, `process.hrtime` ns, the profile's clock); each
 * sample is counted in the stage it falls in, by the function it was in (self time, ms), as the
 * profile saw it: sampling adds its own cost, so the sums are above the pass's own figures.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const [profileFile, passFile, topArg] = process.argv.slice(2);
if (!profileFile || !passFile) {
  console.error('usage: node bench/scale-profile.ts <profile.cpuprofile> <pass.json> [top]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as Profile;
const pass = JSON.parse(readFileSync(passFile, 'utf8')) as {
  marksNs: string[];
  stages: Record<string, number>;
};
const marks = pass.marksNs.map((ns) => Number(BigInt(ns) / 1000n));
const stages = Object.keys(pass.stages);
const top = Number(topArg ?? 12);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const name = (n: ProfileNode) =>
  `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(src|bench)\//, '$1/').replace(/^node:internal.*/, 'node:internal')}${n.callFrame.url ? `:${n.callFrame.lineNumber + 1}` : ''}`;
const self = stages.map(() => new Map<string, number>());
const totals = stages.map(() => 0);
let t = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i]!;
  const dt = profile.timeDeltas[i + 1] ?? 0;
  const stage = marks.findIndex((m, k) => k < stages.length && t >= m && t < marks[k + 1]!);
  if (stage < 0) continue;
  const key = name(byId.get(profile.samples[i]!)!);
  self[stage]!.set(key, (self[stage]!.get(key) ?? 0) + dt);
  totals[stage]! += dt;
}
stages.forEach((stage, i) => {
  console.log(
    `${stage}: ${(totals[i]! / 1000).toFixed(1)} ms sampled, ${pass.stages[stage]!.toFixed(1)} ms wall`,
  );
  for (const [key, us] of [...self[i]!].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`  ${(us / 1000).toFixed(1).padStart(7)} ms  ${key}`);
});
