// Smoke test for the local Kafka broker (infra/kafka/kafka.sh) with kafkajs 2.2.4.
//
//   KAFKA_PORT=9092 node infra/kafka/smoke.mjs
//
// Node resolves 'kafkajs' from this file's directory upwards (ESM ignores NODE_PATH), so
// kafkajs@2.2.4 must be installed in the repo, or copy this file next to a node_modules
// that has it (e.g. mkdir /tmp/kafka-smoke && cd /tmp/kafka-smoke && npm i kafkajs@2.2.4).
// SMOKE_VERBOSE=1 prints every check and kafkajs warning as it happens.
//
// Checks: create topics, keyed produce (acks -1), consumer group consume + commit,
// no redelivery for the same group, idempotent producer, transactions
// (commit visible / abort invisible for a read_committed consumer), delete topics.
// Exit 0 when every check passes; prints a one-line summary either way.
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { randomBytes } from 'node:crypto';

const port = process.env.KAFKA_PORT || '9092';
const broker = `127.0.0.1:${port}`;
const run = `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
const topicA = `smoke-${run}-a`;
const topicB = `smoke-${run}-b`;
const groupA = `smoke-${run}-ga`;
const groupB = `smoke-${run}-gb`;
const N = 20;
const OVERALL_TIMEOUT_MS = Number(process.env.SMOKE_TIMEOUT_MS || 90_000);

// kafkajs warns unless idempotent producers retry "forever"; the overall timeout bounds it.
const EOS_RETRY = { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 100, maxRetryTime: 2000 };

const warnings = [];
const kafka = new Kafka({
  clientId: 'wdr-smoke',
  brokers: [broker],
  connectionTimeout: 3000,
  retry: { retries: 3, initialRetryTime: 200 },
  logLevel: logLevel.WARN,
  logCreator:
    () =>
    ({ namespace, level, log }) => {
      const line = `[kafkajs ${level === logLevel.ERROR ? 'ERROR' : 'WARN'}] ${namespace}: ${log.message}${log.error ? ` (${log.error})` : ''}`;
      warnings.push(line);
      if (process.env.SMOKE_VERBOSE) console.error(line);
    },
});

const results = []; // { name, ok, detail }
const check = async (name, fn) => {
  const t = Date.now();
  try {
    const detail = await fn();
    results.push({ name, ok: true, detail: detail ?? '', ms: Date.now() - t });
    return true;
  } catch (e) {
    results.push({ name, ok: false, detail: `${e?.name || 'Error'}: ${e?.message || e}`, ms: Date.now() - t });
    return false;
  }
};
const assert = (cond, msg) => {
  if (!cond) throw new Error(msg);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const msgs = (n, prefix) => Array.from({ length: n }, (_, i) => ({ key: `${prefix}-k${i % 7}`, value: `${prefix}-${i}` }));

// Consume from `topic` in `groupId` until `expect` messages arrive (or, with expect=0,
// until the consumer has joined and fetched for `idleMs` without receiving anything).
async function consume({ topic, groupId, expect, idleMs = 4000, timeoutMs = 30_000, commit = true }) {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1000, maxWaitTimeInMs: 500 });
  const got = [];
  let joined = false;
  let fetchesAfterJoin = 0;
  consumer.on(consumer.events.GROUP_JOIN, () => {
    joined = true;
  });
  consumer.on(consumer.events.FETCH, () => {
    if (joined) fetchesAfterJoin++;
  });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic: t, partition, message }) => {
        got.push({ partition, key: message.key?.toString(), value: message.value?.toString() });
        if (commit) {
          await consumer.commitOffsets([{ topic: t, partition, offset: (BigInt(message.offset) + 1n).toString() }]);
        }
      },
    });
    const t0 = Date.now();
    while (Date.now() - t0 < timeoutMs) {
      if (expect > 0 && got.length >= expect) break;
      if (expect === 0 && joined && fetchesAfterJoin >= 2 && Date.now() - t0 >= idleMs) break;
      await sleep(100);
    }
    if (expect > 0) await sleep(500); // catch unexpected extra deliveries
    assert(joined, `consumer in ${groupId} never joined the group`);
  } finally {
    await consumer.disconnect();
  }
  return got;
}

async function main() {
  const admin = kafka.admin();
  await admin.connect();
  let created = false;
  try {
    await check('connect/metadata', async () => {
      const c = await admin.describeCluster();
      assert(c.brokers.length === 1, `expected 1 broker, got ${c.brokers.length}`);
      return `controller=${c.controller} cluster=${c.clusterId}`;
    });

    created = await check('create topics', async () => {
      const ok = await admin.createTopics({
        waitForLeaders: true,
        topics: [topicA, topicB].map((topic) => ({ topic, numPartitions: 3, replicationFactor: 1 })),
      });
      assert(ok, 'createTopics returned false');
      const md = await admin.fetchTopicMetadata({ topics: [topicA, topicB] });
      for (const t of md.topics) assert(t.partitions.length === 3, `${t.name} has ${t.partitions.length} partitions`);
      return '2x3 partitions';
    });
    if (!created) return;

    await check('produce acks=-1', async () => {
      const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, allowAutoTopicCreation: false });
      await producer.connect();
      try {
        const res = await producer.send({ topic: topicA, acks: -1, messages: msgs(N, 'a') });
        assert(
          res.every((r) => r.errorCode === 0),
          `produce errors: ${JSON.stringify(res)}`,
        );
        return `${N} msgs over ${new Set(res.map((r) => r.partition)).size} partitions`;
      } finally {
        await producer.disconnect();
      }
    });

    await check('group consume+commit', async () => {
      const got = await consume({ topic: topicA, groupId: groupA, expect: N });
      assert(got.length === N, `got ${got.length}/${N} messages`);
      const values = new Set(got.map((m) => m.value));
      assert(values.size === N, `duplicates: ${got.length} msgs, ${values.size} distinct`);
      const byKey = new Map();
      for (const m of got) {
        if (byKey.has(m.key)) assert(byKey.get(m.key) === m.partition, `key ${m.key} on 2 partitions`);
        byKey.set(m.key, m.partition);
      }
      const offsets = await admin.fetchOffsets({ groupId: groupA, topics: [topicA] });
      const committed = offsets[0].partitions.reduce((s, p) => s + Math.max(0, Number(p.offset)), 0);
      assert(committed === N, `committed offsets sum ${committed}, expected ${N}`);
      return `${N} consumed, committed=${committed}`;
    });

    await check('no redelivery (same group)', async () => {
      const got = await consume({ topic: topicA, groupId: groupA, expect: 0 });
      assert(got.length === 0, `redelivered ${got.length} messages`);
      return '0 redelivered';
    });

    await check('idempotent producer', async () => {
      const producer = kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        retry: EOS_RETRY,
        createPartitioner: Partitioners.DefaultPartitioner,
      });
      await producer.connect();
      try {
        const res = await producer.send({ topic: topicB, acks: -1, messages: msgs(5, 'idem') });
        assert(
          res.every((r) => r.errorCode === 0),
          `produce errors: ${JSON.stringify(res)}`,
        );
        return '5 msgs';
      } finally {
        await producer.disconnect();
      }
    });

    await check('transactions', async () => {
      const producer = kafka.producer({
        transactionalId: `smoke-${run}-tx`,
        idempotent: true,
        maxInFlightRequests: 1,
        retry: EOS_RETRY,
        createPartitioner: Partitioners.DefaultPartitioner,
      });
      await producer.connect();
      try {
        const commitTx = await producer.transaction();
        await commitTx.send({ topic: topicB, messages: msgs(5, 'txc') });
        await commitTx.commit();
        const abortTx = await producer.transaction();
        await abortTx.send({ topic: topicB, messages: msgs(3, 'txa') });
        await abortTx.abort();
      } finally {
        await producer.disconnect();
      }
      // read_committed (kafkajs default): 5 idempotent + 5 committed, none aborted
      const got = await consume({ topic: topicB, groupId: groupB, expect: 10 });
      const aborted = got.filter((m) => m.value.startsWith('txa')).length;
      const committed = got.filter((m) => m.value.startsWith('txc')).length;
      assert(aborted === 0, `saw ${aborted} aborted messages`);
      assert(committed === 5, `saw ${committed}/5 committed transactional messages`);
      assert(got.length === 10, `read_committed consumer got ${got.length}, expected 10`);
      return 'commit visible, abort hidden';
    });
  } finally {
    if (created) {
      await check('delete topics', async () => {
        await admin.deleteTopics({ topics: [topicA, topicB], timeout: 10_000 });
        const left = (await admin.listTopics()).filter((t) => t === topicA || t === topicB);
        assert(left.length === 0, `still listed: ${left.join(',')}`);
        try {
          await admin.deleteGroups([groupA, groupB]);
        } catch {
          /* best effort */
        }
        return 'deleted';
      });
    }
    await admin.disconnect();
  }
}

const timer = setTimeout(() => {
  console.log(
    `KAFKA SMOKE FAIL ${broker}: timed out after ${OVERALL_TIMEOUT_MS} ms; done: ${results.map((r) => `${r.name}=${r.ok ? 'ok' : 'FAIL'}`).join(', ')}`,
  );
  process.exit(2);
}, OVERALL_TIMEOUT_MS);
timer.unref();

const started = Date.now();
let fatal = null;
try {
  await main();
} catch (e) {
  fatal = e;
}
const failed = results.filter((r) => !r.ok);
for (const r of results) {
  if (process.env.SMOKE_VERBOSE || !r.ok) console.error(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name} (${r.ms} ms) ${r.detail}`);
}
if (failed.length || fatal) {
  for (const w of warnings.slice(-10)) console.error(`  ${w}`);
}
const ok = !fatal && failed.length === 0 && results.length >= 8;
const summary = results.map((r) => `${r.name}=${r.ok ? 'ok' : 'FAIL'}`).join(', ');
console.log(
  `KAFKA SMOKE ${ok ? 'OK' : 'FAIL'} ${broker} in ${Date.now() - started} ms: ${summary}` +
    `${fatal ? `; fatal: ${fatal.message}` : ''}; kafkajs warnings: ${warnings.length}`,
);
process.exit(ok ? 0 : 1);
