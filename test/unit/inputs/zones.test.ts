import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseZones, parseZonesFile } from '../../../src/inputs/zones.ts';
import { tempDir } from '../../support/temp.ts';

const run =
  (values: Record<string, string> = {}) =>
  (input: string) =>
    values[input];

describe('zones input', () => {
  it('reads each zone with its own Kubernetes inputs over the run ones', () => {
    const zones = parseZones(
      `
- name: eu-west
  context: eu
  namespace: loadtest
  share: 70
  runners: 3
  node-selector: {pool: loadtest, zone: a}
  tolerations: [{key: pool, operator: Exists}]
  runner-image: grafana/k6:2.2.0
- name: us-east
  kubeconfig: us.yaml
  share: 30
  runners: 2
  env: {A: "1"}
`,
      run({ 'node-selector': 'pool=default', 'runner-image': 'mine:1' }),
    )!;
    expect(zones.map((z) => [z.name, z.share, z.runners])).toEqual([
      ['eu-west', 70, 3],
      ['us-east', 30, 2],
    ]);
    expect(zones[0]!.kubernetes).toMatchObject({
      context: 'eu',
      namespace: 'loadtest',
      image: 'grafana/k6:2.2.0',
      nodeSelector: { pool: 'loadtest', zone: 'a' },
      tolerations: [{ key: 'pool', operator: 'Exists' }],
    });
    expect(zones[1]!.kubernetes).toMatchObject({
      kubeconfig: 'us.yaml',
      image: 'mine:1',
      nodeSelector: { pool: 'default' },
      env: [{ name: 'A', value: '1' }],
    });
  });

  it('is no zones when blank', () => {
    expect(parseZones(undefined, run())).toBeUndefined();
    expect(parseZones('  \n', run())).toBeUndefined();
  });

  it.each([
    ['name: a', /^zones: must be a YAML list of zones/],
    ['[a: [', /^zones: not valid YAML/],
    [
      '[{name: eu, share: 70, runners: 1}, {name: us, share: 20, runners: 1}]',
      /^zones: the zones' shares add up to 90, not 100 \(eu 70, us 20\)$/,
    ],
    ['[{name: eu, share: 100, runners: 0}]', /^zones: zone "eu": runners: must be at least 1$/],
    ['[{name: eu, share: 100, runners: 1.5}]', /^zones: zone "eu": runners: must be a whole number$/],
    ['[{name: EU, share: 100, runners: 1}]', /^zones: zone "EU": name: "EU" is not a zone name/],
    ['[{share: 100, runners: 1}]', /^zones: zone 1: name: is missing$/],
    ['[{name: eu, share: 100, runners: 1, nodes: 3}]', /^zones: zone "eu": zone: Unrecognized key: "nodes"$/],
    [
      '[{name: eu, share: 50, runners: 1}, {name: eu, share: 50, runners: 1}]',
      /^zones: zone "eu": the name is given twice$/,
    ],
    [
      '[{name: eu, share: 100, runners: 1, spread: random}]',
      /^zones: zone "eu": spread: "random" is not one of/,
    ],
    [
      '[{name: eu, share: 100, runners: 1, tolerations: [{operator: Maybe}]}]',
      /^zones: zone "eu": tolerations: 0\.operator/,
    ],
    [
      '[{name: eu, share: 100, runners: 1, node-selector: {"bad key!": x}}]',
      /^zones: zone "eu": node-selector: "bad key!" is not a valid label key$/,
    ],
  ])('refuses %s in one line naming the zone', (text, error) => {
    expect(() => parseZones(text, run(), 'zones')).toThrow(error);
  });

  it('names the CLI flag', () => {
    expect(() => parseZones('[{name: eu, share: 90, runners: 1}]', run(), '--zones')).toThrow(/^--zones: /);
  });

  it('reads the CLI file, and names --zones when it cannot be read or holds no zone', () => {
    const dir = tempDir('k6d-zones-');
    const file = path.join(dir, 'zones.yaml');
    writeFileSync(file, '- {name: eu, share: 100, runners: 2, namespace: load}\n');
    expect(parseZonesFile(file, run()).map((z) => [z.name, z.runners])).toEqual([['eu', 2]]);
    expect(() => parseZonesFile(path.join(dir, 'none.yaml'), run())).toThrow(
      /^--zones: cannot read .*none\.yaml/,
    );
    writeFileSync(file, '\n');
    expect(() => parseZonesFile(file, run())).toThrow(`--zones: ${file} has no zone`);
  });
});
