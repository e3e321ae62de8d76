import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort, releasePort } from './ports.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The users a secured broker knows, one per SASL mechanism the fleet supports. */
export interface SecureKafkaUsers {
  scram512: { username: string; password: string };
  scram256: { username: string; password: string };
  plain: { username: string; password: string };
}

export interface SecureKafka {
  /** SASL over TLS (SCRAM-SHA-512, SCRAM-SHA-256 and PLAIN enabled): `127.0.0.1:<port>`. */
  saslSslBroker: string;
  /** TLS with a required client certificate (no SASL): `127.0.0.1:<port>`. */
  mtlsBroker: string;
  users: SecureKafkaUsers;
  /** PEM files: the CA that signed the broker's and the client's certificates, the client's pair, and an unrelated CA. */
  files: { ca: string; clientCert: string; clientKey: string; otherCa: string };
  logs: () => string;
  stop: () => Promise<void>;
}

function openssl(cwd: string, args: string[]): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * A CA, a broker certificate for 127.0.0.1 signed by it, a client certificate signed by it (for
 * mutual TLS) and a second, unrelated CA (a client trusting only that one must refuse the broker).
 * Keys are unencrypted PKCS#8, which the broker reads as a PEM keystore.
 */
function makeCertificates(dir: string): SecureKafka['files'] & { serverPem: string } {
  const days = ['-days', '2'];
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    ...days,
    '-subj',
    '/CN=wdr-test-kafka-ca',
  ]);
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'other-ca.key',
    '-out',
    'other-ca.pem',
    ...days,
    '-subj',
    '/CN=wdr-unrelated-ca',
  ]);
  const sign = (name: string, subject: string, extensions: string) => {
    writeFileSync(join(dir, `${name}.ext`), extensions);
    openssl(dir, ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      ...days,
      '-extfile',
      `${name}.ext`,
    ]);
  };
  sign('broker', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  sign('client', '/CN=wdr-fleet', 'extendedKeyUsage=clientAuth\n');
  // The broker's PEM keystore: its private key followed by its certificate chain.
  const serverPem = join(dir, 'broker-keystore.pem');
  writeFileSync(
    serverPem,
    readFileSync(join(dir, 'broker.key'), 'utf8') +
      readFileSync(join(dir, 'broker.crt'), 'utf8') +
      readFileSync(join(dir, 'ca.pem'), 'utf8'),
  );
  return {
    ca: join(dir, 'ca.pem'),
    clientCert: join(dir, 'client.crt'),
    clientKey: join(dir, 'client.key'),
    otherCa: join(dir, 'other-ca.pem'),
    serverPem,
  };
}

/**
 * A second, secured Apache Kafka broker (KRaft, one node) beside the shared plaintext one, from the
 * same Maven Central jars (`infra/kafka/kafka.sh libs`), in a temporary directory: a SASL_SSL
 * listener with SCRAM-SHA-512/256 users (created at format time, as `kafka-storage format
 * --add-scram` does on a real cluster) and a PLAIN user (JAAS), and an SSL listener that requires a
 * client certificate. The inter-broker and controller listeners are plaintext on loopback (one node
 * talks to itself). Resolves once the broker logged its start.
 */
export async function startSecureKafka(): Promise<SecureKafka> {
  execFileSync('bash', [join(REPO, 'infra', 'kafka', 'kafka.sh'), 'libs'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const libs = join(process.env['KAFKA_HOME'] ?? join(REPO, '.stack', 'kafka'), 'libs');
  const dir = mkdtempSync(join(tmpdir(), 'wdr-secure-kafka-'));
  const files = makeCertificates(dir);
  const [saslPort, mtlsPort, internalPort, controllerPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const secret = () => randomBytes(12).toString('base64url');
  const users: SecureKafkaUsers = {
    scram512: { username: 'wdr-scram512', password: secret() },
    scram256: { username: 'wdr-scram256', password: secret() },
    plain: { username: 'wdr-plain', password: secret() },
  };
  const props = join(dir, 'server.properties');
  writeFileSync(
    props,
    [
      'process.roles=broker,controller',
      'node.id=1',
      `listeners=SASL_SSL://127.0.0.1:${saslPort},SSL://127.0.0.1:${mtlsPort},INTERNAL://127.0.0.1:${internalPort},CONTROLLER://127.0.0.1:${controllerPort}`,
      `advertised.listeners=SASL_SSL://127.0.0.1:${saslPort},SSL://127.0.0.1:${mtlsPort},INTERNAL://127.0.0.1:${internalPort}`,
      'listener.security.protocol.map=SASL_SSL:SASL_SSL,SSL:SSL,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT',
      'inter.broker.listener.name=INTERNAL',
      'controller.listener.names=CONTROLLER',
      `controller.quorum.bootstrap.servers=127.0.0.1:${controllerPort}`,
      'sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN',
      'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
      'listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
      `listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_${users.plain.username}="${users.plain.password}";`,
      'ssl.keystore.type=PEM',
      `ssl.keystore.location=${files.serverPem}`,
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${files.ca}`,
      'listener.name.ssl.ssl.client.auth=required',
      `log.dirs=${join(dir, 'data')}`,
      'num.partitions=1',
      'offsets.topic.replication.factor=1',
      'offsets.topic.num.partitions=1',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'share.coordinator.state.topic.replication.factor=1',
      'share.coordinator.state.topic.min.isr=1',
      'group.initial.rebalance.delay.ms=0',
      'auto.create.topics.enable=false',
      'num.network.threads=2',
      'num.io.threads=2',
      'log.segment.bytes=8388608',
      '',
    ].join('\n'),
  );
  const log4j = join(dir, 'log4j2.properties');
  writeFileSync(
    log4j,
    [
      'status = warn',
      'appender.out.type = Console',
      'appender.out.name = OUT',
      'appender.out.layout.type = PatternLayout',
      'appender.out.layout.pattern = [%d] %p %m (%c)%n',
      'rootLogger.level = warn',
      'rootLogger.appenderRef.out.ref = OUT',
      'logger.raftserver.name = kafka.server.KafkaRaftServer',
      'logger.raftserver.level = info',
      '',
    ].join('\n'),
  );
  // The local broker's JVM flags (infra/kafka/kafka.sh): the client compiler and the serial collector cost less CPU here.
  const java = (args: string[]) => [
    '-Xms128m',
    '-Xmx384m',
    '-XX:TieredStopAtLevel=1',
    '-XX:+UseSerialGC',
    `-Dlog4j2.configurationFile=${log4j}`,
    '-cp',
    `${libs}/*`,
    ...args,
  ];
  const clusterId = randomBytes(16).toString('base64url').replace(/^-/, 'A');
  execFileSync(
    'java',
    java([
      'kafka.tools.StorageTool',
      'format',
      '--config',
      props,
      '--cluster-id',
      clusterId,
      '--standalone',
      '--add-scram',
      `SCRAM-SHA-512=[name=${users.scram512.username},password=${users.scram512.password}]`,
      '--add-scram',
      `SCRAM-SHA-256=[name=${users.scram256.username},password=${users.scram256.password}]`,
    ]),
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );

  const output: string[] = [];
  const proc: ChildProcess = spawn('java', java(['kafka.Kafka', props]), { stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (b: Buffer) => {
    output.push(b.toString());
    if (output.length > 300) output.splice(0, output.length - 300);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill('SIGTERM');
      const killer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
    for (const port of [saslPort, mtlsPort, internalPort, controllerPort]) releasePort(port);
  };
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (output.join('').includes('Kafka Server started')) break;
    if (proc.exitCode !== null || Date.now() > deadline) {
      const why = proc.exitCode !== null ? `exited with ${proc.exitCode}` : 'did not start in 90 s';
      const text = output.join('');
      await stop();
      throw new Error(`secured Kafka broker ${why}:\n${text.slice(-6000)}`);
    }
    await sleep(200);
  }
  return {
    saslSslBroker: `127.0.0.1:${saslPort}`,
    mtlsBroker: `127.0.0.1:${mtlsPort}`,
    users,
    files: { ca: files.ca, clientCert: files.clientCert, clientKey: files.clientKey, otherCa: files.otherCa },
    logs: () => output.join('').slice(-8000),
    stop,
  };
}
