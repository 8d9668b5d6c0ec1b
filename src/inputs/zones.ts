import { readFileSync } from 'node:fs';
import { dump as dumpYaml, load as parseYaml } from 'js-yaml';
import { z } from 'zod';
import { ConfigurationError } from '../errors.ts';
import {
  KUBERNETES_INPUTS,
  type KubernetesInput,
  type KubernetesInputs,
  parseKubernetesInputs,
  type ReadInput,
} from './kubernetes.ts';
import { firstIssue } from './parse.ts';

/**
 * Load zones: one test spread over several clusters (or namespaces), each zone with its share of
 * the test in percent, its runner count and its own Kubernetes inputs. The `zones` input (a YAML
 * list; on the CLI `--zones` names a YAML file) is read here for the actions and the CLI alike:
 *
 * ```yaml
 * - name: eu-west            # the k6d_zone tag's value: lowercase letters, digits and -
 *   context: eks-eu-west-1   # kubeconfig and/or context, and namespace: as the inputs of that name
 *   namespace: loadtest
 *   share: 70                # percent of every scenario; the zones' shares add up to 100
 *   runners: 3
 *   node-selector: {pool: loadtest}
 *   tolerations: [{key: pool, operator: Exists}]
 *   runner-image: grafana/k6:2.2.0
 * - name: us-east
 *   kubeconfig: us.yaml      # the CLI: a file; an action: kubeconfig YAML or base64 of it
 *   share: 30
 *   runners: 2
 * ```
 *
 * Every other key is a Kubernetes input by its action name (src/inputs/kubernetes.ts): a zone's
 * value wins over the run's own input, which every zone gets otherwise. Maps (`node-selector`,
 * `labels`, `env`, …) may be given as YAML maps or as the input's `key=value` lines; YAML inputs
 * (`tolerations`, `resources`, `pod-patch`) as YAML. Each error is one line naming the zone:
 * `zones: zone "us-east": tolerations: …`.
 */

/** One load zone, validated. */
export interface ZoneInputs {
  /** The zone's name: the value of the `k6d_zone` tag on its runners' samples. */
  name: string;
  /** Percent of every scenario, more than 0; the zones' shares add up to 100. */
  share: number;
  /** Its runner count, a whole number of at least 1. */
  runners: number;
  /** Its Kubernetes inputs: the zone's own over the run's. */
  kubernetes: KubernetesInputs;
}

/** A zone's name: a label value and a tag value every tool accepts (a DNS label). */
const ZONE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The inputs whose value is `key=value` lines (a zone may give them as a YAML map). */
const LINE_INPUTS = new Set<KubernetesInput>([
  'env',
  'secret-env',
  'node-selector',
  'sysctls',
  'labels',
  'pod-annotations',
]);
/** The inputs whose value is YAML (a zone gives them as YAML). */
const YAML_INPUTS = new Set<KubernetesInput>(['tolerations', 'resources', 'barrier-resources', 'pod-patch']);

const zoneSchema = z
  .object({
    name: z.string({ error: 'is missing' }).regex(ZONE_NAME, {
      error: (issue) =>
        `"${String(issue.input)}" is not a zone name (lowercase letters, digits and -, at most 63)`,
    }),
    share: z.number({ error: 'must be a number of percent' }).positive({ error: 'must be more than 0' }),
    runners: z
      .number({ error: 'must be a whole number' })
      .int({ error: 'must be a whole number' })
      .min(1, { error: 'must be at least 1' }),
    ...Object.fromEntries(KUBERNETES_INPUTS.map((input) => [input, z.unknown().optional()])),
  })
  .strict();

/** A zone's value of a Kubernetes input as the input's text. */
function inputText(input: KubernetesInput, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  if (LINE_INPUTS.has(input) && !Array.isArray(value) && typeof value === 'object')
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k}=${String(v)}`)
      .join('\n');
  if (Array.isArray(value) && (LINE_INPUTS.has(input) || input === 'image-pull-secrets'))
    return value.map(String).join('\n');
  if (YAML_INPUTS.has(input)) return dumpYaml(value);
  return String(value);
}

/**
 * Reads the `zones` input.
 * @param text the YAML list of zones; undefined or blank: no zones (a run as without them).
 * @param runInput reads the run's own Kubernetes inputs (each zone's default).
 * @param input how the user names the zones input (`zones`, `--zones`) and the run's inputs.
 * @param names how the user names a run-level Kubernetes input (for a run-level value's errors).
 * @throws ConfigurationError one line naming the zone: not a list, a key that is no input, a bad
 *   name, share or runner count, a name given twice, an invalid input value, or shares that do not
 *   add up to 100.
 */
export function parseZones(
  text: string | undefined,
  runInput: ReadInput,
  input = 'zones',
): ZoneInputs[] | undefined {
  if (!text?.trim()) return undefined;
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    throw new ConfigurationError(`${input}: not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (!Array.isArray(value) || value.length === 0)
    throw new ConfigurationError(
      `${input}: must be a YAML list of zones, e.g. [{name: eu, context: eu, share: 70, runners: 3}, {name: us, context: us, share: 30, runners: 2}]`,
    );
  const zones = value.map((raw, i) => {
    const label = `${input}: zone ${typeof raw?.name === 'string' ? `"${raw.name}"` : i + 1}`;
    const parsed = zoneSchema.safeParse(raw);
    if (!parsed.success) throw new ConfigurationError(`${label}: ${firstIssue(parsed.error, 'zone')}`);
    const zone = parsed.data as Record<string, unknown> & { name: string; share: number; runners: number };
    const own = (name: KubernetesInput) => inputText(name, zone[name]);
    const kubernetes = parseKubernetesInputs(
      (name) => own(name) ?? runInput(name),
      (name) => `${label}: ${name}`,
    );
    return { name: zone.name, share: zone.share, runners: zone.runners, kubernetes };
  });
  const seen = new Set<string>();
  for (const zone of zones) {
    if (seen.has(zone.name))
      throw new ConfigurationError(`${input}: zone "${zone.name}": the name is given twice`);
    seen.add(zone.name);
  }
  const total = zones.reduce((sum, z) => sum + z.share, 0);
  if (Math.abs(total - 100) > 1e-6)
    throw new ConfigurationError(
      `${input}: the zones' shares add up to ${Number(total.toFixed(6))}, not 100 (${zones.map((z) => `${z.name} ${z.share}`).join(', ')})`,
    );
  return zones;
}

/**
 * The zones of the CLI's `--zones FILE` (`run` and `cleanup`): the file read and parsed as
 * {@link parseZones} does, with `runInput` as every zone's defaults.
 * @throws ConfigurationError naming `--zones`: an unreadable file, a file without a zone, or what
 *   {@link parseZones} refuses.
 */
export function parseZonesFile(file: string, runInput: ReadInput): ZoneInputs[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigurationError(`--zones: cannot read ${file}: ${(error as Error).message}`);
  }
  const zones = parseZones(text, runInput, '--zones');
  if (!zones) throw new ConfigurationError(`--zones: ${file} has no zone`);
  return zones;
}
