#!/usr/bin/env node
// Network flows against the NetworkPolicies of every overlay (k8s/wiring.yaml says who talks to whom).
//
// For each overlay (k8s/base and k8s/overlays/*): build it, read the ConfigMap the services read
// (KAFKA_BROKERS, REDIS_URL, the callee URLs), derive every flow the code makes, and evaluate the
// rendered NetworkPolicies for it the way the API defines them: a pod selected by no policy of a
// direction is open in that direction; otherwise a flow needs a rule of every selecting policy's union
// to match (pod and namespace selectors with matchLabels / matchExpressions, numbered, ranged and named
// ports, ipBlock with except). A flow between two pods needs both the source's egress and the
// destination's ingress. Needed flows must be allowed without help from an ipBlock for in-cluster
// pods (CNIs differ there); forbidden flows must be denied even counting such ipBlocks.
//
// The wiring itself is checked against the code: each service's callees equal the callers named in
// @wdr/contracts (packages/contracts/dist, built by ./dev), and each caller's env.ts reads the callee's
// URL variable.
//
//   node scripts/k8s-validate/flows.mjs [--results file.json] [--table] [--negative]
//
// --negative also runs the controls: a copy of the policies with the production Kafka port removed,
// with a caller's ingress rule removed, and with the metadata except removed must each fail.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const args = process.argv.slice(2);
const resultsFile = args.includes('--results') ? args[args.indexOf('--results') + 1] : undefined;
const showTable = args.includes('--table');

const wiring = parse(readFileSync(join(repo, 'k8s/wiring.yaml'), 'utf8'));
const SERVICES = Object.keys(wiring.services);

function build(dir) {
  const [cmd, pre] = process.env.KUSTOMIZE
    ? [process.env.KUSTOMIZE.split(' ')[0], process.env.KUSTOMIZE.split(' ').slice(1)]
    : spawnSync('kustomize', ['version'], { stdio: 'ignore' }).status === 0
      ? ['kustomize', ['build']]
      : ['kubectl', ['kustomize']];
  const out = execFileSync(cmd, [...pre, dir], { encoding: 'utf8', maxBuffer: 64 << 20 });
  return parseAllDocuments(out)
    .map((d) => d.toJS())
    .filter(Boolean);
}

// ------------------------------------------------------------------ the wiring against the code
async function wiringProblems() {
  const problems = [];
  const contracts = await import(pathToFileURL(join(repo, 'packages/contracts/dist/index.js')).href);
  const derived = Object.fromEntries(SERVICES.map((s) => [s, new Set()]));
  for (const [callee, api] of Object.entries(contracts.INTERNAL_APIS))
    for (const ep of Object.values(api)) for (const caller of ep.callers) derived[caller]?.add(callee);
  for (const s of SERVICES) {
    const declared = [...wiring.services[s].callees].sort().join(',');
    const fromCode = [...derived[s]].sort().join(',');
    if (declared !== fromCode) problems.push(`wiring: ${s} callees [${declared}] but @wdr/contracts names it a caller of [${fromCode}]`);
    const envTs = readFileSync(join(repo, 'apps', s, 'src/env.ts'), 'utf8');
    for (const c of wiring.services[s].callees) {
      const v = wiring.calleeUrlEnv[c];
      if (!new RegExp(`\\b${v}\\b`).test(envTs)) problems.push(`wiring: ${s} calls ${c} but apps/${s}/src/env.ts does not read ${v}`);
    }
    if (wiring.services[s].backing.includes('redis') !== /\bREDIS_URL\b/.test(envTs))
      problems.push(`wiring: ${s} redis in the wiring and REDIS_URL in env.ts disagree`);
    if (wiring.services[s].backing.includes('kafka') !== /kafkaEnv/.test(envTs))
      problems.push(`wiring: ${s} kafka in the wiring and kafkaEnv in env.ts disagree`);
  }
  return problems;
}

// ------------------------------------------------------------------ policy semantics
function selects(sel, labels) {
  if (!sel) return true;
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels?.[k] !== String(v)) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = labels != null && Object.hasOwn(labels, e.key);
    const val = labels?.[e.key];
    if (e.operator === 'In' && !(has && e.values.includes(val))) return false;
    if (e.operator === 'NotIn' && has && e.values.includes(val)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

const ipNum = (ip) => ip.split('.').reduce((a, o) => a * 256 + Number(o), 0);
function inCidr(ip, cidr) {
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(ipNum(ip) / size) === Math.floor(ipNum(base) / size);
}

/** Endpoint: { ns, nsLabels, labels, ip, namedPorts } for a pod, { ip } outside the cluster. */
function peerMatches(peer, ep, policyNs, countIpBlockForPods) {
  if (peer.ipBlock) {
    if (ep.labels && !countIpBlockForPods) return false;
    return inCidr(ep.ip, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((c) => inCidr(ep.ip, c));
  }
  if (!ep.labels) return false;
  const nsOk = peer.namespaceSelector ? selects(peer.namespaceSelector, ep.nsLabels) : ep.ns === policyNs;
  return nsOk && selects(peer.podSelector, ep.labels);
}

function portMatches(ports, port, proto, dest) {
  if (!ports?.length) return true;
  return ports.some((p) => {
    if ((p.protocol ?? 'TCP') !== proto) return false;
    if (p.port === undefined) return true;
    if (typeof p.port === 'string') return dest.namedPorts?.[p.port] === port;
    return port >= p.port && port <= (p.endPort ?? p.port);
  });
}

function types(pol) {
  return pol.spec.policyTypes ?? (pol.spec.egress ? ['Ingress', 'Egress'] : ['Ingress']);
}

/** @returns {string|null} null when allowed, else why not */
function direction(policies, dir, subject, other, port, proto, dest, countIp) {
  const key = dir === 'Egress' ? 'egress' : 'ingress';
  const peersKey = dir === 'Egress' ? 'to' : 'from';
  const selecting = policies.filter(
    (p) => p.metadata.namespace === subject.ns && types(p).includes(dir) && selects(p.spec.podSelector, subject.labels),
  );
  if (!selecting.length) return null;
  for (const p of selecting)
    for (const rule of p.spec[key] ?? []) {
      const peers = rule[peersKey];
      const peerOk = !peers?.length || peers.some((pe) => peerMatches(pe, other, p.metadata.namespace, countIp));
      if (peerOk && portMatches(rule.ports, port, proto, dest)) return null;
    }
  return `${dir.toLowerCase()} of ${subject.name} (${selecting.map((p) => p.metadata.name).join(', ')})`;
}

function evaluate(policies, src, dst, port, proto, countIp) {
  const why = [];
  if (src.ns) {
    const e = direction(policies, 'Egress', src, dst, port, proto, dst, countIp);
    if (e) why.push(e);
  }
  if (dst.ns) {
    const i = direction(policies, 'Ingress', dst, src, port, proto, dst, countIp);
    if (i) why.push(i);
  }
  return why;
}

// ------------------------------------------------------------------ flows of one overlay
function flowsOf(objects, overlayName) {
  const problems = [];
  const ns = objects.find((o) => o.kind === 'Namespace')?.metadata ?? { name: 'wdr', labels: {} };
  const nsLabels = { ...(ns.labels ?? {}), 'kubernetes.io/metadata.name': ns.name };
  const cm = objects.find((o) => o.kind === 'ConfigMap' && /^wdr-config/.test(o.metadata.name))?.data ?? {};
  const policies = objects
    .filter((o) => o.kind === 'NetworkPolicy')
    .map((p) => ({ ...p, metadata: { ...p.metadata, namespace: p.metadata.namespace ?? ns.name } }));
  let nextIp = 10;
  const podIp = () => `10.244.${Math.floor(nextIp / 250)}.${(nextIp++ % 250) + 1}`;
  const pods = {};
  for (const s of SERVICES) {
    const d = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === s);
    if (!d) {
      problems.push(`${overlayName}: no Deployment ${s}`);
      continue;
    }
    const namedPorts = {};
    for (const c of d.spec.template.spec.containers) for (const p of c.ports ?? []) if (p.name) namedPorts[p.name] = p.containerPort;
    pods[s] = { name: s, ns: d.metadata.namespace ?? ns.name, nsLabels, labels: d.spec.template.metadata.labels, ip: podIp(), namedPorts };
  }
  // Jobs of the overlay (the topics Job): reach what the wiring says, nothing else.
  for (const [j, w] of Object.entries(wiring.jobs ?? {})) {
    const job = objects.find((o) => o.kind === 'Job' && o.metadata.name === j);
    if (job)
      pods[j] = {
        name: j,
        ns: job.metadata.namespace ?? ns.name,
        nsLabels,
        labels: job.spec.template.metadata.labels,
        ip: podIp(),
        namedPorts: {},
        job: w,
      };
  }
  const foreign = (nsName, labels, name, namedPorts = {}) => ({
    name,
    ns: null, // policies of other namespaces are not ours to evaluate
    nsLabels: { 'kubernetes.io/metadata.name': nsName, ...(backingNs.has(nsName) ? wiring.cluster.backingNamespaceLabels : {}) },
    labels,
    ip: podIp(),
    namedPorts,
  });
  const hostNs = (host) => {
    const parts = host.split('.');
    return parts.length >= 2 && !/^\d+$/.test(parts[1]) ? parts[1] : ns.name;
  };
  /** host:port of a URL or broker list entry -> an endpoint and the port reached */
  const backingNs = new Set();
  const addr = (hostport) => {
    const m = /^([^:/]+):(\d+)$/.exec(hostport.trim());
    if (!m) throw new Error(`cannot read address ${hostport}`);
    return { host: m[1], port: Number(m[2]) };
  };
  const kafka = (cm.KAFKA_BROKERS ?? '').split(',').filter(Boolean).map(addr);
  if (!kafka.length) problems.push(`${overlayName}: KAFKA_BROKERS is not in the ConfigMap`);
  const redisU = cm.REDIS_URL ? new URL(cm.REDIS_URL) : null;
  const redis = redisU ? { host: redisU.hostname, port: Number(redisU.port || 6379) } : null;
  const pg = wiring.cluster.postgres;
  for (const a of [...kafka, redis, pg].filter(Boolean)) backingNs.add(hostNs(a.host));

  const c = wiring.cluster;
  const dns = foreign(c.dns.namespace, c.dns.labels, 'kube-dns');
  const prometheus = foreign(c.prometheus.namespace, c.prometheus.labels, 'prometheus');
  const ingress = foreign(c.ingressController.namespace, c.ingressController.labels, 'ingress-controller');
  const stranger = foreign('some-team', { app: 'anything' }, 'a pod of another namespace');
  const backingPod = (a, what) => foreign(hostNs(a.host), { 'app.kubernetes.io/name': what }, `${what} ${a.host}`);

  const needed = [];
  const forbidden = [];
  const flow = (list, src, dst, port, proto, label) => list.push({ src, dst, port, proto, label });
  for (const s of [...SERVICES, ...Object.keys(wiring.jobs ?? {})]) {
    const me = pods[s];
    if (!me) continue;
    const w = wiring.services[s] ?? { callees: [], internet: false, ...me.job };
    for (const pp of c.dns.ports) {
      const [proto, port] = pp.split('/');
      flow(needed, me, dns, Number(port), proto, `${s} -> DNS ${pp}`);
    }
    for (const callee of w.callees) {
      const v = wiring.calleeUrlEnv[callee];
      if (!cm[v]) {
        problems.push(`${overlayName}: ${v} (${s} -> ${callee}) is not in the ConfigMap`);
        continue;
      }
      const u = new URL(cm[v]);
      const svcName = u.hostname.split('.')[0];
      const svc = objects.find((o) => o.kind === 'Service' && o.metadata.name === svcName);
      const sp = svc?.spec.ports.find((p) => p.port === Number(u.port || 80));
      if (!svc || !sp) {
        problems.push(`${overlayName}: ${v}=${cm[v]} names no Service port in the build`);
        continue;
      }
      const target = Object.values(pods).find((p) => selects({ matchLabels: svc.spec.selector }, p.labels));
      const tp = typeof sp.targetPort === 'string' ? target?.namedPorts[sp.targetPort] : (sp.targetPort ?? sp.port);
      if (!target || !tp) {
        problems.push(`${overlayName}: Service ${svcName} port ${sp.port} reaches no container port`);
        continue;
      }
      flow(needed, me, target, tp, 'TCP', `${s} -> ${callee} :${tp} (${v})`);
    }
    for (const b of w.backing) {
      if (b === 'kafka')
        for (const k of kafka) flow(needed, me, backingPod(k, 'kafka'), k.port, 'TCP', `${s} -> Kafka ${k.host}:${k.port}`);
      if (b === 'redis' && redis)
        flow(needed, me, backingPod(redis, 'redis'), redis.port, 'TCP', `${s} -> Redis ${redis.host}:${redis.port}`);
      if (b === 'postgres') flow(needed, me, backingPod(pg, 'postgres'), pg.port, 'TCP', `${s} -> Postgres ${pg.host}:${pg.port}`);
    }
    if (w.internet)
      for (const pp of c.internet.ports) {
        const [proto, port] = pp.split('/');
        flow(needed, me, { name: 'internet', ip: c.internet.ip }, Number(port), proto, `${s} -> internet ${c.internet.ip}:${port}`);
      }
    if (!me.job) flow(needed, prometheus, me, me.namedPorts.metrics, 'TCP', `Prometheus -> ${s} metrics :${me.namedPorts.metrics}`);
  }
  if (pods.gateway)
    flow(
      needed,
      ingress,
      pods.gateway,
      pods.gateway.namedPorts.http,
      'TCP',
      `ingress controller -> gateway :${pods.gateway.namedPorts.http}`,
    );

  // Forbidden: the listed ones, and every service to every internal API it is not a caller of.
  const seen = new Set();
  const forbid = (src, dst, port, label) => {
    if (!src || !dst || port === undefined) return;
    const k = `${src.name}>${dst.name ?? dst.ip}:${port}`;
    if (seen.has(k)) return;
    seen.add(k);
    flow(forbidden, src, dst, port, 'TCP', label);
  };
  for (const f of wiring.forbidden) {
    const sources = f.fromPeer ? [{ prometheus, stranger }[f.fromPeer]] : f.from === '*' ? Object.values(pods) : [pods[f.from]];
    for (const src of sources) {
      if (f.ip) forbid(src, { name: f.ip, ip: f.ip }, f.port, `${src.name} -> ${f.ip}:${f.port} (${f.why})`);
      else
        for (const dst of f.to === '*' ? Object.values(pods) : [pods[f.to]]) {
          const port = f.port === 'api' ? dst.namedPorts.http : f.port;
          if (dst !== src) forbid(src, dst, port, `${src.name} -> ${dst.name} :${port} (${f.why})`);
        }
    }
  }
  for (const s of [...SERVICES, ...Object.keys(wiring.jobs ?? {})])
    for (const callee of Object.keys(wiring.calleeUrlEnv))
      if (callee !== s && pods[s] && pods[callee] && !(wiring.services[s]?.callees ?? []).includes(callee))
        forbid(pods[s], pods[callee], pods[callee].namedPorts.http, `${s} -> ${callee} :${pods[callee].namedPorts.http} (not a caller)`);

  const rows = [];
  for (const f of needed) {
    const why = evaluate(policies, f.src, f.dst, f.port, f.proto, false);
    rows.push({ kind: 'needed', label: f.label, ok: !why.length, verdict: why.length ? `DENIED by ${why.join('; ')}` : 'allowed' });
  }
  for (const f of forbidden) {
    const why = evaluate(policies, f.src, f.dst, f.port, f.proto, true);
    rows.push({ kind: 'forbidden', label: f.label, ok: why.length > 0, verdict: why.length ? 'denied' : 'ALLOWED' });
  }
  return { rows, problems };
}

// ------------------------------------------------------------------ run
function overlays() {
  const list = [join(repo, 'k8s/base')];
  for (const d of readdirSync(join(repo, 'k8s/overlays')).sort()) list.push(join(repo, 'k8s/overlays', d));
  return list.filter((d) => existsSync(join(d, 'kustomization.yaml')));
}

function report(name, { rows, problems }) {
  const bad = rows.filter((r) => !r.ok);
  const ok = !bad.length && !problems.length;
  const n = rows.filter((r) => r.kind === 'needed').length;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}: ${n} needed flows, ${rows.length - n} forbidden flows`);
  for (const p of problems) console.log(`     - ${p}`);
  for (const r of bad) console.log(`     - ${r.kind}: ${r.label}: ${r.verdict}`);
  if (showTable) for (const r of rows) console.log(`       ${r.kind === 'needed' ? 'needed   ' : 'forbidden'} ${r.label} -> ${r.verdict}`);
  return ok;
}

let passed = 0;
let failed = 0;
const wp = await wiringProblems();
if (wp.length) {
  failed++;
  console.log('FAIL k8s/wiring.yaml against the code');
  for (const p of wp) console.log(`     - ${p}`);
} else {
  passed++;
  console.log('ok   k8s/wiring.yaml: callees, URL variables, Kafka and Redis as the code reads them');
}
const built = {};
for (const dir of overlays()) {
  const name = relative(repo, dir);
  built[name] = build(dir);
  if (report(name, flowsOf(built[name], name))) passed++;
  else failed++;
}

// Negative controls: each mutation of the production build must make the evaluation fail.
const prod = built['k8s/overlays/production'];
if (prod) {
  const mutate = (fn) => fn(structuredClone(prod));
  const controls = {
    'Kafka TLS port 9093 removed from every egress rule': (objs) => {
      for (const p of objs.filter((o) => o.kind === 'NetworkPolicy'))
        for (const r of p.spec.egress ?? []) if (r.ports) r.ports = r.ports.filter((x) => x.port !== 9093);
      return objs;
    },
    'recipe-extractor removed from the orchestrator ingress': (objs) => {
      for (const p of objs.filter((o) => o.kind === 'NetworkPolicy'))
        for (const r of p.spec.ingress ?? [])
          if (r.from) r.from = r.from.filter((f) => f.podSelector?.matchLabels?.['app.kubernetes.io/name'] !== 'recipe-extractor');
      return objs;
    },
    'link-local except dropped from the ipBlocks': (objs) => {
      for (const p of objs.filter((o) => o.kind === 'NetworkPolicy'))
        for (const r of p.spec.egress ?? [])
          for (const t of r.to ?? []) if (t.ipBlock) t.ipBlock.except = (t.ipBlock.except ?? []).filter((c) => c !== '169.254.0.0/16');
      return objs;
    },
    'an allow-all egress policy for the renderer': (objs) => {
      objs.push({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'oops', namespace: 'wdr' },
        spec: { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'browser-renderer' } }, policyTypes: ['Egress'], egress: [{}] },
      });
      return objs;
    },
  };
  for (const [what, fn] of Object.entries(controls)) {
    const { rows } = flowsOf(mutate(fn), 'control');
    const caught = rows.filter((r) => !r.ok);
    if (caught.length) {
      passed++;
      console.log(`ok   negative control "${what}": fails (${caught[0].kind}: ${caught[0].label})`);
    } else {
      failed++;
      console.log(`FAIL negative control "${what}": the evaluation still passes`);
    }
  }
}

console.log(`\n${passed} passed, ${failed} failed`);
if (resultsFile)
  writeFileSync(
    resultsFile,
    `${JSON.stringify({ name: 'k8s-network-flows (k8s/wiring.yaml)', passed, failed, skipped: 0, suitesFailed: failed })}\n`,
  );
process.exit(failed ? 1 : 0);
