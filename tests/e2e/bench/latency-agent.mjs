#!/usr/bin/env node
// The agent of the end-to-end latency bench (latency.mjs): the relay starts it as its `--claude`
// binary with the CLI's flags; it runs the demo agent (`$BENCH_DEMO_AGENT demo-agent`, the relay
// binary) on latency-scenario.json with those flags, passes stdin through, and in every stdout line
// replaces the placeholder run of 22 '@' with the time (epoch ms, `performance.timeOrigin + now()`,
// zero-padded to 22 characters) just before the line is written to the relay.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

const here = dirname(fileURLToPath(import.meta.url));
const relay = process.env.BENCH_DEMO_AGENT;
if (!relay) {
  process.stderr.write('latency-agent: BENCH_DEMO_AGENT (the bridge-relay binary) is not set\n');
  process.exit(2);
}
const child = spawn(relay, ['demo-agent', '--scenario', join(here, 'latency-scenario.json'), ...process.argv.slice(2)], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
process.stdin.pipe(child.stdin);
const PLACEHOLDER = /@{22}/g;
const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
lines.on('line', (line) => {
  const stamped = line.includes('@@@@') ? line.replace(PLACEHOLDER, () => (performance.timeOrigin + performance.now()).toFixed(3).padStart(22, '0')) : line;
  process.stdout.write(stamped + '\n');
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
process.on('SIGTERM', () => child.kill('SIGTERM'));
