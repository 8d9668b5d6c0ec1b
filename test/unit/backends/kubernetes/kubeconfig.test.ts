import { describe, expect, it } from 'vitest';
import { kubeconfigSecrets } from '../../../../src/backends/kubernetes/kubeconfig.ts';

// The credentials masked in the log, whatever form the kubeconfig input takes (issue: a kubeconfig
// given as JSON or in flow style was not masked).

const TOKEN = 'eyJhbGciOiJSUzI1NiIsImtpZCI6IkFCQyJ9.payload.signature';
const KEY = 'LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t';
const object = {
  apiVersion: 'v1',
  kind: 'Config',
  clusters: [
    { name: 'c', cluster: { server: 'https://10.0.0.1:6443', 'certificate-authority-data': 'Q0E=' } },
  ],
  users: [
    { name: 'a', user: { token: TOKEN } },
    { name: 'b', user: { 'client-key-data': KEY, 'client-certificate-data': 'Q0VSVA==' } },
    {
      name: 'c',
      user: {
        exec: { command: 'aws', env: [{ name: 'AWS_SECRET_ACCESS_KEY', value: 'wJalrXUtnFEMI/K7MDENG' }] },
      },
    },
  ],
  contexts: [{ name: 'c', context: { cluster: 'c', user: 'a' } }],
  'current-context': 'c',
};
const expected = [TOKEN, KEY, 'Q0VSVA==', 'wJalrXUtnFEMI/K7MDENG'];

describe('kubeconfig credentials to mask', () => {
  it.each([
    ['JSON on one line', JSON.stringify(object)],
    ['JSON on several lines', JSON.stringify(object, null, 2)],
    [
      'flow-style YAML',
      `apiVersion: v1\nkind: Config\nusers: [{name: a, user: {token: "${TOKEN}"}}, {name: b, user: {client-key-data: ${KEY}, client-certificate-data: Q0VSVA==}}, {name: c, user: {exec: {command: aws, env: [{name: AWS_SECRET_ACCESS_KEY, value: wJalrXUtnFEMI/K7MDENG}]}}}]\nclusters: []\ncontexts: []\n`,
    ],
    ['base64 of JSON', Buffer.from(JSON.stringify(object)).toString('base64')],
  ])('finds every credential in %s', (_, text) => {
    expect(kubeconfigSecrets(text).sort()).toEqual([...expected].sort());
  });

  it('masks every token-like word of a kubeconfig that does not parse', () => {
    expect(kubeconfigSecrets(`{"users": [{"user": {"token": "${TOKEN}"`)).toContain(TOKEN);
  });
});
