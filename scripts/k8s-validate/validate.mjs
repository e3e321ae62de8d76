#!/usr/bin/env node
// Builds every kustomization of the repository (k8s/base, k8s/overlays/*, k8s/kafka-topics,
// infra/observability; the topics Job component k8s/kafka-topics-job inside the overlays) and validates each object of the output:
//
//   1. against its schema: the Kubernetes API (kubernetes-models, generated from the OpenAPI
//      document of Kubernetes 1.34) and the Prometheus Operator CRDs
//      (@kubernetes-models/prometheus-operator: PrometheusRule, ServiceMonitor, ...), and for
//      unknown fields (strict.mjs, from the same models' type declarations). An object of a
//      kind with no schema here fails, unless it is listed in NO_SCHEMA below (said in the output);
//   2. references inside the build: every ConfigMap a pod reads (envFrom, configMapKeyRef, volume)
//      is in the build (kustomize renames generated ones with a hash: a hand-written name fails);
//      every Secret and key a pod reads is in the build or declared in k8s/base/secret.example.yaml
//      (the Secrets the platform creates, commented keys being optional ones), and every key that file
//      declares is read by some pod (a documented key nothing maps is a setting that cannot be given);
//      every HPA's scaleTargetRef and every PDB's selector finds a Deployment, every
//      serviceAccountName has its ServiceAccount, image references carry a tag or digest
//      (never latest; base leaves the tag to the overlay);
//   3. in k8s/overlays/production only: images from a registry with a release tag or digest (not
//      dev), requests and limits on every container, no token mounted, a PDB and (HPA or >= 2
//      replicas) for every Deployment, an absolute https runbook_url on every alert.
//
// Then the negative controls (fixtures/*/): each is a kustomization with known mistakes, which must
// fail with the messages listed in its expect.txt, so a validator that stopped validating fails too.
//
//   node scripts/k8s-validate/validate.mjs [--results file.json] [dir ...]
//
// Builds with `kustomize build` when a kustomize binary is on PATH, else `kubectl kustomize`
// (KUSTOMIZE="cmd args" overrides).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { unknownFields } from './strict.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const modules = join(here, 'node_modules');

// Kinds validated only by the checks of step 2: no schema for them ships in a registry package.
const NO_SCHEMA = new Set(['kafka.strimzi.io/v1beta2/KafkaTopic']);

const args = process.argv.slice(2);
let resultsFile;
const dirs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--results') resultsFile = args[++i];
  else dirs.push(args[i]);
}

function kustomizations() {
  const list = [join(repo, 'k8s/base')];
  const overlays = join(repo, 'k8s/overlays');
  for (const d of readdirSync(overlays).sort()) list.push(join(overlays, d));
  // k8s/kafka-topics-job is a kustomize Component (built inside the overlays that include it).
  list.push(join(repo, 'k8s/kafka-topics'), join(repo, 'infra/observability'));
  return list.filter((d) => existsSync(join(d, 'kustomization.yaml')));
}

/** @returns {[string, string[]]} the command and its leading arguments */
function builder() {
  if (process.env.KUSTOMIZE) {
    const [cmd, ...rest] = process.env.KUSTOMIZE.split(' ');
    return [cmd, rest];
  }
  if (spawnSync('kustomize', ['version'], { stdio: 'ignore' }).status === 0) return ['kustomize', ['build']];
  return ['kubectl', ['kustomize']];
}

function build(dir) {
  const [cmd, rest] = builder();
  return execFileSync(cmd, [...rest, dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
}

const modelCache = new Map();
function modelDir(apiVersion) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  return group === 'monitoring.coreos.com'
    ? join(modules, '@kubernetes-models/prometheus-operator', group, version)
    : join(modules, 'kubernetes-models', group, version);
}

async function modelFor(apiVersion, kind) {
  const file = join(modelDir(apiVersion), 'index.js');
  if (!modelCache.has(file)) {
    modelCache.set(file, existsSync(file) ? await import(pathToFileURL(file).href) : {});
  }
  const m = modelCache.get(file)[kind];
  return m && m.apiVersion === apiVersion && m.kind === kind ? m : undefined;
}

/** The Secrets the platform creates (k8s/base/secret.example.yaml): name -> keys, commented keys included. */
function declaredSecrets() {
  const out = new Map();
  for (const chunk of readFileSync(join(repo, 'k8s/base/secret.example.yaml'), 'utf8').split(/^---$/m)) {
    const o = parseAllDocuments(chunk)[0]?.toJS();
    if (o?.kind !== 'Secret') continue;
    const keys = new Set([...Object.keys(o.stringData ?? {}), ...Object.keys(o.data ?? {})]);
    for (const m of chunk.matchAll(/^\s+#\s+([A-Z][A-Z0-9_]*):/gm)) keys.add(m[1]);
    out.set(o.metadata.name, keys);
  }
  return out;
}

function podSpecs(o) {
  if (['Deployment', 'StatefulSet', 'DaemonSet', 'Job'].includes(o.kind)) return [o.spec?.template?.spec ?? {}];
  if (o.kind === 'CronJob') return [o.spec?.jobTemplate?.spec?.template?.spec ?? {}];
  return [];
}

function matches(selector, labels) {
  return Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v);
}

function checkImage(ref, production, requireTag) {
  const problems = [];
  const at = ref.indexOf('@');
  const name = at >= 0 ? ref.slice(0, at) : ref;
  const digest = at >= 0 ? ref.slice(at + 1) : undefined;
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  const tag = colon > slash ? name.slice(colon + 1) : undefined;
  if (digest !== undefined && !/^sha256:[0-9a-f]{64}$/.test(digest)) problems.push(`image ${ref}: malformed digest`);
  if (requireTag && !tag && !digest) problems.push(`image ${ref}: no tag or digest`);
  if (tag === 'latest') problems.push(`image ${ref}: tag latest`);
  if (production) {
    if (tag === 'dev') problems.push(`image ${ref}: tag dev in production`);
    if (slash < 0 || !name.slice(0, slash).includes('.')) problems.push(`image ${ref}: no registry host in production`);
  }
  return problems;
}

async function validate(dir) {
  // The production overlay, and the negative controls named production-* that stand in for it.
  const production = relative(repo, dir) === 'k8s/overlays/production' || /^production-/.test(relative(join(here, 'fixtures'), dir));
  // Base: the image tag is the overlay's to set. Overlays (and fixtures) must set one.
  const pinned = !/^k8s\/base$/.test(relative(repo, dir));
  const errors = [];
  const notes = [];
  let text;
  try {
    text = build(dir);
  } catch (e) {
    return { errors: [`build failed: ${(e.stderr || e.message).trim()}`], notes, count: 0 };
  }
  const docs = parseAllDocuments(text);
  const objects = [];
  for (const d of docs) {
    if (d.errors.length) errors.push(`YAML: ${d.errors[0].message}`);
    const o = d.toJS();
    if (o) objects.push(o);
  }
  const byKind = (k) => objects.filter((o) => o.kind === k);
  const configMaps = new Set(byKind('ConfigMap').map((o) => o.metadata?.name));
  const accounts = new Set(byKind('ServiceAccount').map((o) => o.metadata?.name));
  const secrets = declaredSecrets();
  for (const o of byKind('Secret'))
    secrets.set(o.metadata?.name, new Set([...Object.keys(o.stringData ?? {}), ...Object.keys(o.data ?? {})]));
  const readKeys = new Set();
  const wholeSecrets = new Set();
  const deployments = byKind('Deployment');

  for (const o of objects) {
    const id = `${o.kind ?? '?'}/${o.metadata?.name ?? '?'}`;
    if (!o.apiVersion || !o.kind) {
      errors.push(`${id}: no apiVersion or kind`);
      continue;
    }
    if (!o.metadata?.name) errors.push(`${id}: no metadata.name`);
    const key = `${o.apiVersion}/${o.kind}`;
    const Model = await modelFor(o.apiVersion, o.kind);
    if (Model) {
      try {
        new Model(o).validate();
      } catch (e) {
        errors.push(`${id} (${o.apiVersion}): ${e.message}`);
      }
      for (const u of unknownFields(o, join(modelDir(o.apiVersion), `${o.kind}.d.ts`), o.kind, modules))
        errors.push(`${id} (${o.apiVersion}): ${u}`);
    } else if (NO_SCHEMA.has(key)) {
      notes.push(key);
    } else {
      errors.push(`${id}: no schema for ${o.apiVersion} ${o.kind}`);
    }

    for (const spec of podSpecs(o)) {
      const containers = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
      for (const c of containers) {
        for (const p of checkImage(String(c.image ?? ''), production, pinned)) errors.push(`${id} container ${c.name}: ${p}`);
        for (const ref of c.envFrom ?? []) {
          const n = ref.configMapRef?.name;
          if (n && !configMaps.has(n)) errors.push(`${id} container ${c.name}: ConfigMap ${n} is not in the build`);
          const sn = ref.secretRef?.name;
          if (sn && !secrets.has(sn))
            errors.push(`${id} container ${c.name}: Secret ${sn} is neither in the build nor in secret.example.yaml`);
          if (sn) wholeSecrets.add(sn);
        }
        for (const e of c.env ?? []) {
          const cm = e.valueFrom?.configMapKeyRef;
          if (cm && !configMaps.has(cm.name)) errors.push(`${id} container ${c.name}: ConfigMap ${cm.name} is not in the build`);
          const sk = e.valueFrom?.secretKeyRef;
          if (!sk) continue;
          if (!secrets.has(sk.name))
            errors.push(`${id} container ${c.name}: Secret ${sk.name} is neither in the build nor in secret.example.yaml`);
          else if (!secrets.get(sk.name).has(sk.key))
            errors.push(`${id} container ${c.name}: Secret ${sk.name} has no key ${sk.key} (secret.example.yaml)`);
          readKeys.add(`${sk.name}/${sk.key}`);
        }
        if (production) {
          const r = c.resources ?? {};
          for (const k of ['cpu', 'memory']) {
            if (!r.requests?.[k]) errors.push(`${id} container ${c.name}: no ${k} request`);
            if (!r.limits?.[k]) errors.push(`${id} container ${c.name}: no ${k} limit`);
          }
        }
      }
      for (const v of spec.volumes ?? []) {
        if (v.configMap && !configMaps.has(v.configMap.name))
          errors.push(`${id} volume ${v.name}: ConfigMap ${v.configMap.name} is not in the build`);
        if (v.secret && !secrets.has(v.secret.secretName))
          errors.push(`${id} volume ${v.name}: Secret ${v.secret.secretName} is neither in the build nor in secret.example.yaml`);
        if (v.secret) wholeSecrets.add(v.secret.secretName);
      }
      if (spec.serviceAccountName && !accounts.has(spec.serviceAccountName))
        errors.push(`${id}: ServiceAccount ${spec.serviceAccountName} is not in the build`);
      if (production) {
        if (spec.automountServiceAccountToken !== false) errors.push(`${id}: automountServiceAccountToken is not false`);
        if (!spec.serviceAccountName) errors.push(`${id}: no serviceAccountName (runs as default)`);
      }
    }
  }
  // Every key secret.example.yaml declares for a Secret this build reads must be read by some pod.
  for (const [name, keys] of declaredSecrets())
    if ([...readKeys].some((k) => k.startsWith(`${name}/`)) && !wholeSecrets.has(name))
      for (const key of keys)
        if (!readKeys.has(`${name}/${key}`)) errors.push(`Secret ${name}: key ${key} of secret.example.yaml is read by no container`);
  for (const h of byKind('HorizontalPodAutoscaler')) {
    const t = h.spec?.scaleTargetRef ?? {};
    if (!objects.some((o) => o.kind === t.kind && o.metadata?.name === t.name))
      errors.push(`HorizontalPodAutoscaler/${h.metadata?.name}: target ${t.kind}/${t.name} is not in the build`);
  }
  for (const p of byKind('PodDisruptionBudget')) {
    if (!deployments.some((d) => matches(p.spec?.selector?.matchLabels, d.spec?.template?.metadata?.labels)))
      errors.push(`PodDisruptionBudget/${p.metadata?.name}: selects no Deployment`);
  }
  if (production) {
    // Alerts link their runbook absolutely (the overlay's runbooks.yaml base), so a page opens from Alertmanager.
    for (const r of byKind('PrometheusRule'))
      for (const g of r.spec?.groups ?? [])
        for (const rule of g.rules ?? [])
          if (rule.alert && !/^https:\/\/[^#\s]+#.+$/.test(rule.annotations?.runbook_url ?? ''))
            errors.push(
              `PrometheusRule/${r.metadata?.name} ${rule.alert}: runbook_url "${rule.annotations?.runbook_url ?? ''}" is not an absolute https URL`,
            );
    // The rules' namespace scope is the recording rule wdr:fleet_namespace, labelled by the overlay with the
    // namespace the rules are installed in; no expression spells a namespace itself.
    for (const r of byKind('PrometheusRule'))
      for (const g of r.spec?.groups ?? [])
        for (const rule of g.rules ?? []) {
          if (rule.record === 'wdr:fleet_namespace' && rule.labels?.namespace !== r.metadata?.namespace)
            errors.push(
              `PrometheusRule/${r.metadata?.name}: wdr:fleet_namespace labels namespace ${rule.labels?.namespace}, but the rules are installed in ${r.metadata?.namespace}`,
            );
          const literal = /namespace\s*=~?\s*"[^"$]+"/.exec(String(rule.expr ?? ''));
          if (literal)
            errors.push(
              `PrometheusRule/${r.metadata?.name} ${rule.alert ?? rule.record}: expr names a namespace literally (${literal[0]})`,
            );
        }
    for (const d of deployments) {
      const name = d.metadata?.name;
      const labels = d.spec?.template?.metadata?.labels;
      if (!byKind('PodDisruptionBudget').some((p) => matches(p.spec?.selector?.matchLabels, labels)))
        errors.push(`Deployment/${name}: no PodDisruptionBudget`);
      const hpa = byKind('HorizontalPodAutoscaler').find((h) => h.spec?.scaleTargetRef?.name === name);
      if (hpa && d.spec?.replicas !== undefined)
        errors.push(`Deployment/${name}: sets replicas although HorizontalPodAutoscaler/${hpa.metadata.name} owns them`);
      if (!hpa && !(d.spec?.replicas >= 2)) errors.push(`Deployment/${name}: fewer than 2 replicas and no HPA`);
    }
  }
  return { errors, notes: [...new Set(notes)], count: objects.length };
}

let passed = 0;
let failed = 0;
const targets = dirs.length ? dirs.map((d) => join(process.cwd(), d)) : kustomizations();
for (const dir of targets) {
  const { errors, notes, count } = await validate(dir);
  const name = relative(repo, dir);
  if (errors.length === 0) {
    passed++;
    console.log(`ok   ${name}: ${count} objects valid${notes.length ? ` (no schema, references only: ${notes.join(', ')})` : ''}`);
  } else {
    failed++;
    console.log(`FAIL ${name}: ${errors.length} problems in ${count} objects`);
    for (const e of errors) console.log(`     - ${e}`);
  }
}

// Negative controls: each fixture must fail, and with every message its expect.txt lists.
if (!dirs.length) {
  const fixtures = join(here, 'fixtures');
  for (const f of readdirSync(fixtures).sort()) {
    const dir = join(fixtures, f);
    const expected = readFileSync(join(dir, 'expect.txt'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    const { errors } = await validate(dir);
    const missing = expected.filter((x) => !errors.some((e) => e.includes(x)));
    if (errors.length && missing.length === 0) {
      passed++;
      console.log(`ok   negative control ${f}: rejected (${errors.length} problems, all ${expected.length} expected ones among them)`);
    } else {
      failed++;
      console.log(
        `FAIL negative control ${f}: ${errors.length ? `expected problems not reported: ${missing.join(' | ')}` : 'passed validation but must not'}`,
      );
      for (const e of errors) console.log(`     - ${e}`);
    }
  }
}

console.log(`${passed} passed, ${failed} failed`);
if (resultsFile) {
  writeFileSync(
    resultsFile,
    `${JSON.stringify({ name: 'k8s-manifests (kustomize + kubernetes-models)', passed, failed, skipped: 0, suitesFailed: failed })}\n`,
  );
}
process.exit(failed ? 1 : 0);
