#!/usr/bin/env node
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FLEET_SERVICES, isServiceName } from '@wdr/contracts';
import { parseCommandLine, runCommand, usageError, type CommandIo } from './cli.js';
import { generateServiceKey, parsePrivateJwk, type ServicePublicJwk } from './service-identity.js';

/**
 * Service identity keys (docs/operations.md, "Service identity"): one Ed25519 key per service, the
 * public halves in one key set every service reads.
 *
 *   generate --service S [--kid K]   a new key: prints {"private": JWK, "public": JWK} (the private one for
 *                                    the service's Secret, the public one for the key set)
 *   local DIR                        the local stack's keys (./dev up): DIR/<service>.jwk for each service
 *                                    that has none yet, then DIR/keys.json from them and any DIR/*.public.json
 */
const usage = `usage: identity-keys <command>
  generate --service S [--kid K]   print a new key pair as {"private": JWK, "public": JWK}
  local DIR                        create missing DIR/<service>.jwk, rewrite DIR/keys.json`;

/** A kid that says whose key it is and when it was made: `billing-ledger.20261126.a1b2c3`. */
function newKid(service: string): string {
  return `${service}.${new Date().toISOString().slice(0, 10).replace(/-/g, '')}.${randomBytes(3).toString('hex')}`;
}

async function identityKeys(args: string[], io: CommandIo): Promise<number> {
  const { command, positionals, values } = parseCommandLine(
    usage,
    ['generate', 'local'],
    { service: { type: 'string' }, kid: { type: 'string' } },
    args,
    io,
  );

  if (command === 'generate') {
    const service = values.service;
    if (!isServiceName(service)) usageError(usage, `--service must be one of ${FLEET_SERVICES.join(', ')}`, io);
    const key = generateServiceKey(service, values.kid ?? newKid(service));
    io.out(JSON.stringify({ private: key.privateJwk, public: key.publicJwk }));
  } else {
    const dir = positionals[0];
    if (!dir) usageError(usage, 'local needs a directory', io);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const keys: ServicePublicJwk[] = [];
    for (const service of FLEET_SERVICES) {
      const file = join(dir, `${service}.jwk`);
      if (!existsSync(file)) writeFileSync(file, JSON.stringify(generateServiceKey(service, newKid(service)).privateJwk), { mode: 0o600 });
      const jwk = parsePrivateJwk(readFileSync(file, 'utf8'));
      keys.push({ kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid: jwk.kid, service });
    }
    // Extra public keys kept during a rotation's overlap (docs/operations.md).
    for (const f of readdirSync(dir)
      .filter((n) => n.endsWith('.public.json'))
      .sort())
      keys.push(JSON.parse(readFileSync(join(dir, f), 'utf8')) as ServicePublicJwk);
    writeFileSync(join(dir, 'keys.json'), JSON.stringify({ keys }), { mode: 0o600 });
    io.out(`identity keys in ${dir}: ${keys.map((k) => k.kid).join(', ')}`);
  }
  return 0;
}

await runCommand(identityKeys);
