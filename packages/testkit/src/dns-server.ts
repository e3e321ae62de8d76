import { createSocket, type RemoteInfo } from 'node:dgram';

/**
 * What a name answers:
 * - a list of IPv4 addresses: A records, every time;
 * - `{ rebind: [first, then] }`: the first query answers `first`, every later one `then` (DNS
 *   rebinding: a check that resolves first sees an allowed address, a second resolution a blocked one);
 * - `{ failFirst: address }`: the first query fails (SERVFAIL), every later one answers `address`
 *   (a name that does not resolve for a check but resolves for whoever asks next);
 * - `'nxdomain'`: the name does not exist.
 * Names not in the table answer NXDOMAIN. AAAA queries answer no records (NOERROR, empty).
 */
export type DnsRecord = string[] | { rebind: [string, string] } | { failFirst: string } | 'nxdomain';

export interface DnsServer {
  /** `127.0.0.1:<port>`, as TARGET_DNS_SERVERS takes it. */
  address: string;
  port: number;
  /** Queries received, by lower-case name (A and AAAA). */
  queries: Map<string, number>;
  /** Add or replace a name (and reset its query count). */
  set: (name: string, record: DnsRecord) => void;
  close: () => Promise<void>;
}

const TYPE_A = 1;

/** A small authoritative DNS server over UDP on 127.0.0.1 for tests: A records, rebinding and failing names. */
export async function startDnsServer(records: Record<string, DnsRecord> = {}): Promise<DnsServer> {
  const table = new Map<string, DnsRecord>(Object.entries(records).map(([k, v]) => [k.toLowerCase(), v]));
  /** A-record answers given so far, by name: what drives the rebinding and fail-first modes. */
  const answered = new Map<string, number>();
  const queries = new Map<string, number>();
  const socket = createSocket('udp4');

  socket.on('message', (msg: Buffer, rinfo: RemoteInfo) => {
    const parsed = parseQuery(msg);
    if (!parsed) return;
    const { id, name, qtype, question } = parsed;
    queries.set(name, (queries.get(name) ?? 0) + 1);
    const record = table.get(name);
    let rcode = 0;
    let addresses: string[] = [];
    if (record === undefined || record === 'nxdomain') {
      rcode = 3;
    } else if (qtype === TYPE_A) {
      const n = answered.get(name) ?? 0;
      answered.set(name, n + 1);
      if (Array.isArray(record)) addresses = record;
      else if ('rebind' in record) addresses = [n === 0 ? record.rebind[0] : record.rebind[1]];
      else if (n === 0) rcode = 2;
      else addresses = [record.failFirst];
    }
    socket.send(answer(id, question, rcode, addresses), rinfo.port, rinfo.address);
  });

  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => resolve());
  });
  const port = socket.address().port;
  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    set: (name, record) => {
      table.set(name.toLowerCase(), record);
      answered.delete(name.toLowerCase());
      queries.delete(name.toLowerCase());
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

function parseQuery(msg: Buffer): { id: number; name: string; qtype: number; question: Buffer } | undefined {
  if (msg.length < 12 || msg.readUInt16BE(4) < 1) return undefined;
  const labels: string[] = [];
  let i = 12;
  while (i < msg.length && msg[i] !== 0) {
    const len = msg[i]!;
    if (len > 63 || i + 1 + len > msg.length) return undefined;
    labels.push(msg.subarray(i + 1, i + 1 + len).toString('ascii'));
    i += 1 + len;
  }
  if (i + 5 > msg.length) return undefined;
  const end = i + 5;
  return { id: msg.readUInt16BE(0), name: labels.join('.').toLowerCase(), qtype: msg.readUInt16BE(i + 1), question: msg.subarray(12, end) };
}

function answer(id: number, question: Buffer, rcode: number, addresses: string[]): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  // QR, opcode 0, AA, RD copied as set, RA; rcode.
  header.writeUInt16BE(0x8000 | 0x0400 | 0x0100 | 0x0080 | rcode, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(addresses.length, 6);
  const records = addresses.map((address) => {
    const rr = Buffer.alloc(16);
    rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    rr.writeUInt16BE(TYPE_A, 2);
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(0, 6); // TTL 0: nobody caches
    rr.writeUInt16BE(4, 10);
    address.split('.').forEach((octet, k) => rr.writeUInt8(Number(octet), 12 + k));
    return rr;
  });
  return Buffer.concat([header, question, ...records]);
}
