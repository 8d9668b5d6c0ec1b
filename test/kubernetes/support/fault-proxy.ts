import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

/**
 * A fault-injecting HTTP proxy in front of the test cluster's kube-apiserver, on 127.0.0.1. The
 * run under test is given a kubeconfig that points at it; it forwards every request to the real
 * API server (authenticating with the admin certificate) and, where a rule matches, answers with
 * an error status instead, delays the request, or cuts a streaming response (a watch, a followed
 * log) after a while. The API server itself cannot be made to fail on demand, hence the proxy.
 */

/** One fault. The first rule with hits left whose method and path match is applied. */
export interface FaultRule {
  /** A name for the test's assertions (how often it was applied: {@link FaultProxy.hits}). */
  name: string;
  /** HTTP method to match; any when absent. */
  method?: string;
  /** Matched against the request's path with its query string (decoded). */
  path: RegExp;
  /** Answer with this status (a Kubernetes `Status` body) instead of forwarding. */
  status?: number;
  /** Wait this long before forwarding (or answering with `status`), in ms. */
  delayMs?: number;
  /** Forward, then cut the response stream this long after its headers, in ms (watches, followed logs). */
  cutAfterMs?: number;
  /** How many requests the rule applies to; every matching one when absent. */
  times?: number;
}

/** A running proxy. */
export interface FaultProxy {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** A kubeconfig (YAML) whose only cluster is the proxy. */
  kubeconfig: string;
  /** The rules in force; tests replace or push to it while a run goes on. */
  rules: FaultRule[];
  /** How many requests each rule (by name) was applied to. */
  hits: Map<string, number>;
  /** Every request seen, as `METHOD path` (for debugging a failing case). */
  seen: string[];
  /** Cuts every open watch and followed log now. @returns how many were cut. */
  cutStreams(): number;
  stop(): Promise<void>;
}

/** The message of every injected error, so the run's output can be traced to the proxy. */
export const INJECTED = 'injected by the fault proxy';

const REASONS: Record<number, string> = {
  429: 'TooManyRequests',
  500: 'InternalError',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/**
 * Starts the proxy in front of `upstream` (the API server's https URL), trusting `caFile` and
 * authenticating with `certFile`/`keyFile` (the harness's admin credentials).
 */
export async function startFaultProxy(options: {
  upstream: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}): Promise<FaultProxy> {
  const upstream = new URL(options.upstream);
  const agent = new https.Agent({
    keepAlive: true,
    ca: readFileSync(options.caFile),
    cert: readFileSync(options.certFile),
    key: readFileSync(options.keyFile),
  });
  const rules: FaultRule[] = [];
  const hits = new Map<string, number>();
  const seen: string[] = [];
  const open = new Set<http.ServerResponse>();
  const streams = new Set<http.ServerResponse>();

  const match = (method: string, path: string): FaultRule | undefined => {
    for (const rule of proxy.rules) {
      if (rule.method && rule.method !== method) continue;
      if (!rule.path.test(path)) continue;
      const used = hits.get(rule.name) ?? 0;
      if (rule.times !== undefined && used >= rule.times) continue;
      hits.set(rule.name, used + 1);
      return rule;
    }
    return undefined;
  };

  const server = http.createServer((req, res) => {
    const method = req.method ?? 'GET';
    const path = decodeURIComponent(req.url ?? '/');
    seen.push(`${method} ${path}`);
    const rule = match(method, path);
    open.add(res);
    if (/[?&](watch|follow)=(true|1)/.test(path)) streams.add(res);
    res.on('close', () => {
      open.delete(res);
      streams.delete(res);
    });
    const forward = () => {
      const headers = { ...req.headers, host: upstream.host };
      delete headers.authorization;
      const up = https.request(
        {
          protocol: 'https:',
          hostname: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method,
          headers,
          agent,
        },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
          if (rule?.cutAfterMs !== undefined) {
            setTimeout(() => {
              upRes.destroy();
              res.destroy();
            }, rule.cutAfterMs).unref();
          }
        },
      );
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      req.pipe(up);
    };
    const answer = () => {
      if (rule?.status === undefined) return forward();
      req.resume();
      res.writeHead(rule.status, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: `${INJECTED} (${rule.name})`,
          reason: REASONS[rule.status] ?? 'InternalError',
          code: rule.status,
        }),
      );
    };
    if (rule?.delayMs) {
      const timer = setTimeout(answer, rule.delayMs);
      res.on('close', () => clearTimeout(timer));
    } else {
      answer();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kubeconfig = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: faulty',
    // The client refuses a plain-HTTP server unless TLS verification is off (nothing to verify).
    `  cluster: {server: "${url}", insecure-skip-tls-verify: true}`,
    'users:',
    '- name: through-proxy',
    '  user: {}',
    'contexts:',
    '- name: faulty',
    '  context: {cluster: faulty, user: through-proxy, namespace: default}',
    'current-context: faulty',
    '',
  ].join('\n');
  const proxy: FaultProxy = {
    url,
    kubeconfig,
    rules,
    hits,
    seen,
    cutStreams: () => {
      const n = streams.size;
      for (const res of streams) res.destroy();
      return n;
    },
    stop: async () => {
      for (const res of open) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      agent.destroy();
    },
  };
  return proxy;
}
