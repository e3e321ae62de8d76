// Unknown fields, which the JSON schemas of kubernetes-models allow (the Kubernetes OpenAPI sets no
// additionalProperties: false) but the API server drops or refuses (kubectl --validate=strict):
// every object of a manifest may use only the fields its type declares. The types are read from
// the models' own declarations (<Kind>.d.ts: `export interface IX { "field"?: Type; ... }`), the
// same package and version the schemas come from, following imports into nested types, arrays
// (Array<T>) and maps ({ [key: string]: T }). Types it cannot follow (unions, aliases of
// primitives, interfaces extending another model) are not checked below that point.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const files = new Map();

function parseFile(file, modules) {
  if (files.has(file)) return files.get(file);
  const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
  const imports = new Map();
  for (const m of text.matchAll(/import \{([^}]+)\} from "([^"]+)";/g)) {
    const spec = m[2];
    const target = spec.startsWith('.') ? join(dirname(file), spec.replace(/\.js$/, '.d.ts')) : join(modules, `${spec}.d.ts`);
    for (const n of m[1]
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean))
      imports.set(n, target);
  }
  const aliases = new Map();
  for (const m of text.matchAll(/export type \{([^}]+)\}/g)) {
    for (const part of m[1].split(',')) {
      const [local, external] = part.split(' as ').map((s) => s.trim());
      if (external) aliases.set(external, local);
    }
  }
  const interfaces = new Map();
  for (const m of text.matchAll(/export interface (\w+)(?: extends ([\w, ]+))? \{/g)) {
    const open = m.index + m[0].length;
    let depth = 1;
    let i = open;
    for (; i < text.length && depth > 0; i++) {
      if (text[i] === '{') depth++;
      else if (text[i] === '}') depth--;
    }
    const body = text.slice(open, i - 1);
    const extendsOther = (m[2] ?? '')
      .split(',')
      .map((s) => s.trim())
      .some((s) => s && s !== 'TypeMeta');
    interfaces.set(m[1], { props: parseProps(body), open: extendsOther });
  }
  const parsed = { file, imports, aliases, interfaces };
  files.set(file, parsed);
  return parsed;
}

/** `"name"?: Type;` at depth 0 of an interface body -> Map(name -> Type). */
function parseProps(body) {
  const props = new Map();
  let i = 0;
  while (i < body.length) {
    const m = /"([^"]+)"\??:\s*/y;
    m.lastIndex = i;
    const hit = m.exec(body);
    if (!hit) {
      i++;
      continue;
    }
    let j = m.lastIndex;
    let depth = 0;
    for (; j < body.length; j++) {
      const c = body[j];
      if (c === '{' || c === '<' || c === '(' || c === '[') depth++;
      else if (c === '}' || c === '>' || c === ')' || c === ']') depth--;
      else if (c === ';' && depth === 0) break;
    }
    props.set(hit[1], body.slice(m.lastIndex, j).trim());
    i = j + 1;
  }
  return props;
}

function resolve(fileInfo, name, modules) {
  const local = fileInfo.aliases.get(name) ?? name;
  if (fileInfo.interfaces.has(local)) return { info: fileInfo, iface: fileInfo.interfaces.get(local) };
  const target = fileInfo.imports.get(name);
  if (!target || !existsSync(target)) return undefined;
  const other = parseFile(target, modules);
  const there = other.aliases.get(name) ?? name;
  return other.interfaces.has(there) ? { info: other, iface: other.interfaces.get(there) } : undefined;
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function checkValue(value, type, info, path, out, modules) {
  const t = type.replace(/\s+/g, ' ').trim();
  if (t.startsWith('Array<') && t.endsWith('>')) {
    if (Array.isArray(value)) value.forEach((v, k) => checkValue(v, t.slice(6, -1), info, `${path}/${k}`, out, modules));
    return;
  }
  const map = /^\{ \[key: string\]: (.+?);? \}$/.exec(t);
  if (map) {
    if (isObject(value)) for (const [k, v] of Object.entries(value)) checkValue(v, map[1], info, `${path}/${k}`, out, modules);
    return;
  }
  if (/^[A-Za-z_]\w*$/.test(t) && isObject(value)) {
    const r = resolve(info, t, modules);
    if (r) checkObject(value, r, path, out, modules);
  }
}

function checkObject(obj, { info, iface }, path, out, modules) {
  if (iface.open) return;
  for (const [k, v] of Object.entries(obj)) {
    const type = iface.props.get(k);
    if (type === undefined) out.push(`${path}/${k}: unknown field`);
    else checkValue(v, type, info, `${path}/${k}`, out, modules);
  }
}

/** Unknown fields of one object, given the .d.ts of its model and the interface name (I<Kind>). */
export function unknownFields(object, dtsFile, kind, modules) {
  if (!existsSync(dtsFile)) return [];
  const info = parseFile(dtsFile, modules);
  const iface = info.interfaces.get(`I${kind}`);
  if (!iface) return [];
  const out = [];
  checkObject(object, { info, iface }, 'data', out, modules);
  return out;
}
