#!/usr/bin/env node
/**
 * What one hop between two processes costs on this machine: the floor under every figure of a fleet
 * of processes. A client and an echo server, two node processes, bounce a 64-byte message over a
 * loopback TCP connection (TCP_NODELAY, as every client of the fleet sets it) `--trips` times; printed:
 * wall time per round trip and the CPU each side spent on it (process.cpuUsage, user and system), once
 * as the scheduler places the two processes and once both pinned to one CPU (`taskset`, when it is
 * there). The reference is the same loop inside one process (both ends of the connection in one event
 * loop: the same syscalls, no other process to wake).
 *
 * Why it is a figure: a page through the fleet makes some tens of such hops (Redis, the internal calls,
 * Postgres, Kafka's produce and fetch, the relays' NOTIFYs), and the bare loops the benches compare with
 * make a handful. Where waking another CPU is dear (a nested virtual machine sends an inter-processor
 * interrupt through its hypervisor), each hop costs several times what it costs on bare metal, and the
 * fleet's ratios fall with it though its code did not change. Usage: node bench/ipc.mjs [--trips 20000]
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createConnection, createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { benchReport } from './lib/report.mjs';

const { values: args } = parseArgs({
  options: { trips: { type: 'string', default: '20000' }, child: { type: 'boolean', default: false } },
});
const TRIPS = Number(args.trips);
const MESSAGE = Buffer.alloc(64, 'x');

/** The echo side: answers each message it reads; reports its own CPU when the client hangs up. */
function serve(onListening) {
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    const cpu0 = process.cpuUsage();
    socket.on('data', (b) => socket.write(b));
    socket.on('end', () => {
      const c = process.cpuUsage(cpu0);
      socket.end(JSON.stringify({ cpuUs: c.user + c.system, systemUs: c.system }));
    });
  });
  server.listen(0, '127.0.0.1', () => onListening(server));
  return server;
}

/** The client side: `TRIPS` round trips, one message in flight; wall and own CPU per round trip, then the server's report. */
async function bounce(port) {
  const socket = createConnection({ host: '127.0.0.1', port, noDelay: true });
  await once(socket, 'connect');
  const warm = Math.min(1000, TRIPS);
  let left = warm + TRIPS;
  let started = 0;
  let cpu0;
  let wall = 0;
  let cpu;
  await new Promise((resolve) => {
    const onData = () => {
      left--;
      if (left === TRIPS) {
        cpu0 = process.cpuUsage();
        started = performance.now();
      }
      if (left > 0) socket.write(MESSAGE);
      else {
        wall = performance.now() - started;
        cpu = process.cpuUsage(cpu0);
        socket.off('data', onData);
        resolve();
      }
    };
    socket.on('data', onData);
    socket.write(MESSAGE);
  });
  const report = new Promise((resolve) => {
    let text = '';
    socket.on('data', (b) => (text += b.toString()));
    socket.on('end', () => resolve(JSON.parse(text)));
  });
  socket.end();
  const server = await report;
  return {
    wallUs: (wall * 1000) / TRIPS,
    clientCpuUs: (cpu.user + cpu.system) / TRIPS,
    clientSystemUs: cpu.system / TRIPS,
    serverCpuUs: server.cpuUs / TRIPS,
  };
}

if (args.child) {
  // The echo server as its own process: prints its port, serves one client, exits.
  serve((server) => {
    process.stdout.write(`${server.address().port}\n`);
    server.on('connection', (s) => s.on('close', () => server.close()));
  });
} else {
  const report = benchReport('ipc');
  const taskset = (() => {
    try {
      execFileSync('taskset', ['-c', '0', 'true']);
      return true;
    } catch {
      return false;
    }
  })();

  const acrossProcesses = async (pinned) => {
    const node = [process.execPath, import.meta.filename, '--child', '--trips', String(TRIPS)];
    const child = pinned ? spawn('taskset', ['-c', '0', ...node]) : spawn(node[0], node.slice(1));
    const [line] = await once(child.stdout, 'data');
    const port = Number(String(line).trim());
    // This process's own CPUs, given back afterwards (`taskset -p` prints "pid N's current affinity list: 0,1").
    const mine = pinned
      ? String(execFileSync('taskset', ['-p', '-c', String(process.pid)]))
          .split(':')
          .pop()
          .trim()
      : undefined;
    if (pinned) execFileSync('taskset', ['-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
    try {
      return await bounce(port);
    } finally {
      if (mine) execFileSync('taskset', ['-p', '-c', mine, String(process.pid)], { stdio: 'ignore' });
      await once(child, 'exit');
    }
  };
  // One process: its CPU is both ends' (the client's reading); the server's own reading is the same process again.
  const inProcess = await new Promise((resolve) => {
    const server = serve(async (s) => {
      const r = await bounce(s.address().port);
      server.close();
      resolve({ ...r, serverCpuUs: 0 });
    });
  });
  const across = await acrossProcesses(false);
  const pinned = taskset ? await acrossProcesses(true) : undefined;

  const row = (name, r) =>
    `${name.padEnd(44)} ${r.wallUs.toFixed(1).padStart(8)} ${r.clientCpuUs.toFixed(1).padStart(10)} ${r.serverCpuUs.toFixed(1).padStart(10)} ${(r.clientCpuUs + r.serverCpuUs).toFixed(1).padStart(10)}`;
  console.log(`${TRIPS} round trips of ${MESSAGE.length} bytes over loopback TCP`);
  console.log(
    `${'run'.padEnd(44)} ${'wall us'.padStart(8)} ${'client us'.padStart(10)} ${'server us'.padStart(10)} ${'both us'.padStart(10)}`,
  );
  console.log(row('one process (both ends in one event loop)', inProcess), '(client: the process, both ends)');
  console.log(row('two processes, placed by the scheduler', across));
  if (pinned) console.log(row('two processes, both on CPU 0', pinned));
  else console.log('(no taskset here: the pinned run is skipped)');
  const both = (r) => r.clientCpuUs + r.serverCpuUs;
  console.log(
    `\nCPU of a round trip between two processes: ${both(across).toFixed(1)} us (${(both(across) / both(inProcess)).toFixed(2)}x the same loop in one process)`,
  );

  report.figure('ipc: CPU per round trip between two processes (both sides)', both(across), {
    unit: 'us',
    reference: both(inProcess),
    referenceName: 'one process',
  });
  report.figure('ipc: wall time per round trip between two processes', across.wallUs, { unit: 'us' });
  if (pinned) report.figure('ipc: CPU per round trip, both processes on one CPU', both(pinned), { unit: 'us' });
  report.check('every round trip answered, the server counted its CPU', Number.isFinite(across.serverCpuUs) && across.serverCpuUs > 0);
  report.finish();
}
