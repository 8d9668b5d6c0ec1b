import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type ActionName,
  acceptedValues,
  checkWith,
  dig,
  expressions,
  findUses,
  type InputSpec,
  knownValue,
  ourRef,
  PLACEHOLDER,
  REUSABLE_WORKFLOW,
  ROOT,
  readAction,
  readYaml,
} from './support/actions.ts';
import { section } from './support/markdown.ts';

// Every workflow under workflows/ and .github/workflows/ is parsed as GitHub would, and every use
// of this project's actions or reusable workflow is checked against its metadata: the inputs it
// passes exist, the required ones are given, and the values that are known before the run are
// accepted by the action's own input readers. Permissions are derived from what the steps do.

type Permissions = Record<string, 'read' | 'write'>;
interface Job {
  'runs-on'?: string;
  if?: string;
  permissions?: Permissions;
  steps?: Array<{ uses?: string; run?: string; with?: Record<string, unknown>; id?: string }>;
  uses?: string;
  with?: Record<string, unknown>;
  outputs?: Record<string, string>;
}
interface Workflow {
  name: string;
  on: Record<string, Record<string, unknown> | null>;
  permissions?: Permissions;
  jobs: Record<string, Job>;
}

/**
 * Root inputs the reusable workflow does not take (docs/workflows.md lists them), with the value
 * it passes instead. kubeconfig and github-token are secrets of the same name.
 */
const REUSABLE_EXCEPTIONS: Record<string, string> = {
  // The result is kept as the artifact k6-distributed-result-<key>, from this path.
  'result-path': `k6-distributed-result-\${{ inputs.key }}.json`,
};

const dirs = ['workflows', '.github/workflows'];
const FILES = dirs.flatMap((dir) =>
  existsSync(path.join(ROOT, dir))
    ? readdirSync(path.join(ROOT, dir))
        .filter((f) => /\.ya?ml$/.test(f))
        .map((f) => `${dir}/${f}`)
    : [],
);
const workflows = new Map(FILES.map((file) => [file, readYaml<Workflow>(file)] as const));
const wf = (file: string) => workflows.get(file)!;

function triggers(w: Workflow): string[] {
  return Object.keys(w.on);
}

/** The inputs of the reusable workflow that log in to a cloud with GitHub's OIDC token. */
const LOGIN_INPUTS = [
  'aws-role-arn',
  'eks-cluster',
  'gcp-workload-identity-provider',
  'gke-cluster',
  'azure-client-id',
  'aks-cluster',
];

/**
 * The steps a job runs, as far as permissions go: a call of our reusable workflow is its checkout
 * and its use of the root action with the caller's `with:` (the called job gets the caller's
 * permissions, and declares none of its own).
 */
function stepsOf(job: Job): NonNullable<Job['steps']> {
  const ref = job.uses ? ourRef(job.uses) : undefined;
  if (ref?.kind !== 'workflow') return job.steps ?? [];
  return [{ uses: 'actions/checkout@v7' }, { uses: '$/', with: job.with ?? {} }];
}

/** The permissions a job needs, from what its steps do. */
function neededPermissions(w: Workflow, job: Job): Permissions {
  const need: Permissions = {};
  const add = (scope: string, level: 'read' | 'write') => {
    if (need[scope] !== 'write') need[scope] = level;
  };
  if (job.uses && LOGIN_INPUTS.some((name) => job.with?.[name])) add('id-token', 'write');
  for (const step of stepsOf(job)) {
    if (!step.uses) continue;
    if (step.uses.startsWith('actions/checkout@')) add('contents', 'read');
    const ref = ourRef(step.uses);
    if (ref?.kind !== 'action' || ref.action === 'run') continue;
    const w2 = step.with ?? {};
    const report = 'report' in w2 ? knownValue(w2.report) : 'true';
    if (ref.action === 'root' && report === 'false') continue;
    const mode = 'mode' in w2 ? knownValue(w2.mode) : 'auto';
    const modes =
      mode === undefined
        ? ['store', 'comment', 'bundle', 'post-bundle']
        : mode === 'auto'
          ? triggers(w).flatMap((t) =>
              t === 'pull_request' || t === 'pull_request_target'
                ? ['comment', 'bundle']
                : t === 'workflow_run'
                  ? ['post-bundle']
                  : t === 'workflow_call'
                    ? ['store', 'comment', 'bundle']
                    : ['store'],
            )
          : [mode];
    for (const m of modes) {
      // The baseline lookup lists the base branch's runs and their artifacts; post-bundle downloads one.
      if (((m === 'comment' || m === 'bundle') && !w2.baseline) || m === 'post-bundle')
        add('actions', 'read');
      if (m === 'comment' || m === 'post-bundle') add('pull-requests', 'write');
    }
  }
  return need;
}

describe('the workflows', () => {
  it('are the four ready-to-copy workflows, the reusable one and our CI', () => {
    expect(FILES.sort()).toEqual([
      '.github/workflows/ci.yml',
      REUSABLE_WORKFLOW,
      'workflows/perf-baseline.yml',
      'workflows/perf-comment.yml',
      'workflows/perf-large.yml',
      'workflows/perf-pr.yml',
    ]);
  });

  describe.each(FILES)('%s', (file) => {
    const w = wf(file);
    const uses = findUses(w.jobs);
    const ours = uses.map((u) => ({ use: u, ref: ourRef(u.uses) })).filter((x) => x.ref !== undefined);

    it('has a name, triggers and jobs', () => {
      expect(w.name).toEqual(expect.any(String));
      expect(triggers(w).length).toBeGreaterThan(0);
      expect(Object.keys(w.jobs).length).toBeGreaterThan(0);
    });

    it('uses at least one of our actions or the reusable workflow', () => {
      expect(ours.length).toBeGreaterThan(0);
    });

    if (file.startsWith('workflows/'))
      it(`names our actions as ${PLACEHOLDER}, pinned to a ref`, () => {
        for (const { use, ref } of ours) {
          expect(ref!.owner, use.uses).toBe(PLACEHOLDER);
          expect(use.uses, use.uses).toMatch(/@v\d+$/);
        }
      });
    else
      it('names our actions with $/ (this repository at the running commit), never by owner', () => {
        for (const { use } of ours) expect(use.uses, use.uses).toMatch(/^\$\//);
      });

    it('pins every other action to a full commit, with its version in a comment', () => {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      const lines = [...text.matchAll(/^\s*(?:-\s+)?uses:\s*(\S+)(.*)$/gm)].filter((m) => !ourRef(m[1]!));
      for (const m of lines) {
        expect(m[1], m[0]).toMatch(/^[\w.-]+\/[\w./-]+@[0-9a-f]{40}$/);
        expect(m[2], m[0]).toMatch(/^ # v\d+(\.\d+)*$/);
      }
    });

    it('passes only inputs the action has, every required one, and values it accepts', () => {
      const problems: string[] = [];
      for (const { use, ref } of ours) {
        if (ref!.kind === 'action') {
          problems.push(...checkWith(readAction(ref!.action).inputs, use));
          const refused = acceptedValues(ref!.action, use);
          if (refused) problems.push(refused);
        } else {
          const called = readYaml<{ on: { workflow_call: { inputs: Record<string, InputSpec> } } }>(
            ref!.file,
          );
          problems.push(...checkWith(called.on.workflow_call.inputs, use));
        }
      }
      expect(problems).toEqual([]);
    });

    it('declares the least permissions each job needs', () => {
      if (file === REUSABLE_WORKFLOW) {
        // A called workflow's job gets what the calling job grants; declaring any would make every
        // caller grant it, whatever its use (neededPermissions derives the callers' from their with:).
        expect(w.permissions).toBeUndefined();
        for (const job of Object.values(w.jobs)) expect(job.permissions).toBeUndefined();
        return;
      }
      for (const [id, job] of Object.entries(w.jobs)) {
        const declared = job.permissions ?? w.permissions;
        expect(declared, `job ${id} has no permissions (at workflow or job level)`).toBeDefined();
        expect(typeof declared, 'read-all / write-all are not least privilege').toBe('object');
        expect(declared, `job ${id}`).toEqual(neededPermissions(w, job));
      }
    });

    it('never runs on pull_request_target (a fork’s code with the base repository’s secrets)', () => {
      expect(triggers(w)).not.toContain('pull_request_target');
    });

    it('refers only to inputs, secrets and step outputs that exist', () => {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      const declaredInputs = new Set(
        Object.keys({
          ...((w.on.workflow_call?.inputs as object | undefined) ?? {}),
          ...((w.on.workflow_dispatch?.inputs as object | undefined) ?? {}),
        }),
      );
      const stepIds = new Set(
        Object.values(w.jobs).flatMap((j) => (j.steps ?? []).map((s) => s.id).filter(Boolean)),
      );
      for (const expr of expressions(text)) {
        for (const m of expr.matchAll(/\binputs\.([\w-]+)/g)) expect(declaredInputs, expr).toContain(m[1]);
        for (const m of expr.matchAll(/\bsteps\.([\w-]+)\.outputs\.([\w-]+)/g)) {
          expect(stepIds, expr).toContain(m[1]);
          const step = Object.values(w.jobs)
            .flatMap((j) => j.steps ?? [])
            .find((s) => s.id === m[1])!;
          const ref = step.uses ? ourRef(step.uses) : undefined;
          if (ref?.kind === 'action')
            expect(Object.keys(readAction(ref.action).outputs), expr).toContain(m[2]);
          else expect(step.run, `${expr}: step ${m[1]} must write ${m[2]}`).toContain(`${m[2]}=`);
        }
      }
    });
  });
});

describe('each workflow does what its use needs', () => {
  const pr = wf('workflows/perf-pr.yml');
  const baseline = wf('workflows/perf-baseline.yml');
  const comment = wf('workflows/perf-comment.yml');
  const large = wf('workflows/perf-large.yml');
  const step = (w: Workflow, action: ActionName) =>
    findUses(w.jobs).find((u) => {
      const r = ourRef(u.uses);
      return r?.kind === 'action' && r.action === action;
    })!;

  it('the PR check runs on pull requests and compares with the baseline workflow', () => {
    expect(triggers(pr)).toEqual(['pull_request']);
    const use = step(pr, 'root');
    expect(use.with.mode ?? 'auto').toBe('auto'); // comment, or bundle on a fork's pull request
    expect(use.with.report ?? 'true').not.toBe('false');
    expect(FILES).toContain(`workflows/${use.with['baseline-workflow']}`);
  });

  it('the baseline runs on pushes to main and stores the result', () => {
    expect((baseline.on.push as { branches: string[] }).branches).toEqual(['main']);
    expect(step(baseline, 'root').with.mode).toBe('store');
  });

  it('the baseline and the PR check run the same test, so their results are compared', () => {
    const same = [
      'script',
      'runners',
      'namespace',
      'node-selector',
      'tolerations',
      'resources',
      'key',
      'k6-args',
    ];
    const a = step(pr, 'root').with;
    const b = step(baseline, 'root').with;
    for (const input of same) expect(a[input], input).toEqual(b[input]);
    const k6 = (w: Workflow) => findUses(w.jobs).find((u) => u.uses.startsWith('grafana/setup-k6-action@'))!;
    expect(k6(pr).with['k6-version']).toEqual(k6(baseline).with['k6-version']);
    // The runner image (action default grafana/k6:2.2.0) is the k6 the preflight uses.
    expect(readAction('root').inputs['runner-image']!.default).toBe(
      `grafana/k6:${k6(pr).with['k6-version']}`,
    );
  });

  it('the comment poster posts the PR check’s bundles when it completes, and runs none of its code', () => {
    const wr = comment.on.workflow_run as { workflows: string[]; types: string[] };
    expect(wr.workflows).toEqual([pr.name]);
    expect(wr.types).toEqual(['completed']);
    const use = step(comment, 'report');
    expect(use.with.mode).toBe('post-bundle');
    expect(use.with.key).toBe(step(pr, 'root').with.key);
    expect(findUses(comment.jobs).map((u) => u.uses)).toEqual([use.uses]); // no checkout
    // Only for pull requests from forks: the others commented themselves.
    expect(Object.values(comment.jobs)[0]!.if).toContain("workflow_run.event == 'pull_request'");
    expect(Object.values(comment.jobs)[0]!.if).toContain('head_repository.full_name != github.repository');
  });

  it('the large run is dispatched by hand with runners, VUs, duration and node pool, and uses them', () => {
    const inputs = large.on.workflow_dispatch!.inputs as Record<string, InputSpec>;
    expect(Object.keys(inputs)).toEqual(expect.arrayContaining(['runners', 'vus', 'duration', 'node-pool']));
    const use = step(large, 'root');
    const input = (name: string) => `\${{ inputs.${name} }}`;
    expect(use.with.runners).toBe(input('runners'));
    expect(use.with['k6-args']).toContain(`--vus ${input('vus')} --duration ${input('duration')}`);
    expect(use.with['node-selector']).toBe(`pool=${input('node-pool')}`);
    expect(use.with.tolerations).toContain(input('node-pool'));
    expect(use.with.report).toBe('false');
  });

  it('the reusable workflow is a workflow_call that uses every input and secret it declares', () => {
    const reusable = wf(REUSABLE_WORKFLOW);
    expect(triggers(reusable)).toEqual(['workflow_call']);
    const call = reusable.on.workflow_call as {
      inputs: Record<string, InputSpec>;
      secrets: Record<string, unknown>;
      outputs: Record<string, { value: string }>;
    };
    const text = readFileSync(path.join(ROOT, REUSABLE_WORKFLOW), 'utf8');
    const jobsText = text.slice(text.indexOf('\njobs:'));
    const used = (kind: string, name: string) => new RegExp(`\\b${kind}\\.${name}(?![\\w-])`).test(jobsText);
    for (const name of Object.keys(call.inputs)) expect(used('inputs', name), `inputs.${name}`).toBe(true);
    for (const name of Object.keys(call.secrets)) expect(used('secrets', name), `secrets.${name}`).toBe(true);
    for (const m of jobsText.matchAll(/secrets\.([\w-]+)/g))
      expect(Object.keys(call.secrets)).toContain(m[1]);
    // Each output is a job output, which is a step output of the root action.
    const job = Object.values(reusable.jobs)[0]!;
    for (const [name, out] of Object.entries(call.outputs)) {
      const jobOutput = /jobs\.load-test\.outputs\.([\w-]+)/.exec(out.value)?.[1];
      expect(Object.keys(job.outputs ?? {}), name).toContain(jobOutput);
      const stepOutput = /steps\.k6\.outputs\.([\w-]+)/.exec(job.outputs![jobOutput!]!)?.[1];
      expect(Object.keys(readAction('root').outputs), name).toContain(stepOutput);
    }
  });

  it('the reusable workflow passes every root input on, from an input or secret of the same name', () => {
    const call = dig(readYaml(REUSABLE_WORKFLOW), 'on.workflow_call') as {
      inputs: Record<string, InputSpec>;
      secrets: Record<string, unknown>;
    };
    const use = findUses(wf(REUSABLE_WORKFLOW).jobs).find((u) => ourRef(u.uses)?.kind === 'action')!;
    const missing: string[] = [];
    for (const name of Object.keys(readAction('root').inputs)) {
      if (name in REUSABLE_EXCEPTIONS) {
        expect(use.with[name], name).toBe(REUSABLE_EXCEPTIONS[name]);
        continue;
      }
      const from = name in call.inputs ? 'inputs' : name in call.secrets ? 'secrets' : undefined;
      if (!from || !String(use.with[name] ?? '').includes(`${from}.${name}`)) missing.push(name);
    }
    expect(missing).toEqual([]);
    // The exceptions are documented where the inputs are.
    const body = section(
      readFileSync(path.join(ROOT, 'docs/workflows.md'), 'utf8'),
      'Inputs of the reusable workflow',
    ).body;
    for (const name of Object.keys(REUSABLE_EXCEPTIONS)) expect(body).toContain(`\`${name}\``);
  });

  describe('the reusable workflow refuses a partial or a second way to the cluster before anything runs', () => {
    const job = Object.values(wf(REUSABLE_WORKFLOW).jobs)[0]!;
    const check = (job.steps ?? [])[0] as { name: string; run: string; env: Record<string, string> };
    /** Runs the step's script with bash, the inputs as the step's env maps them. */
    const run = (inputs: Record<string, string>, kubeconfig = false) => {
      const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
      for (const [variable, expr] of Object.entries(check.env)) {
        const input = /inputs\.([\w-]+)/.exec(expr)?.[1];
        env[variable] = input ? (inputs[input] ?? '') : String(kubeconfig);
      }
      const r = spawnSync('bash', ['-e', '-c', check.run], { env, encoding: 'utf8' });
      return { status: r.status, out: r.stdout };
    };
    const eks = { 'aws-role-arn': 'arn:aws:iam::1:role/r', 'aws-region': 'eu-west-1', 'eks-cluster': 'c' };
    const gke = {
      'gcp-workload-identity-provider': 'projects/1/locations/global/workloadIdentityPools/p/providers/g',
      'gke-cluster': 'c',
      'gke-location': 'europe-west1',
    };

    it('is the first step', () => expect(check.name).toMatch(/login/));
    it('accepts no login, the kubeconfig secret, or one complete login', () => {
      expect(run({}).status).toBe(0);
      expect(run({}, true).status).toBe(0);
      expect(run(eks).status).toBe(0);
      expect(run({ ...gke, 'gcp-service-account': 'sa@p.iam.gserviceaccount.com' }).status).toBe(0);
    });
    it('names the inputs a partial login lacks', () => {
      const r = run({ 'eks-cluster': 'c' });
      expect(r.status).toBe(2);
      expect(r.out).toContain(
        '::error title=k6-distributed::the EKS login needs aws-role-arn aws-region too',
      );
      expect(run({ 'gke-project': 'p' }).out).toContain('gke-project belong to the GKE login');
    });
    it('refuses two ways', () => {
      expect(run(eks, true).out).toContain('give one way to the cluster');
      expect(run({ ...eks, ...gke }).status).toBe(2);
    });
  });
});
