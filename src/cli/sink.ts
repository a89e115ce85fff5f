// `sockbuf sink <proto>`: the receiving end of a test (like `iperf3 -s`). One subcommand per protocol.
import type { Command } from 'commander';
import { registerSinkUdp } from './udp.js';

export function register(program: Command): void {
  const sink = program
    .command('sink')
    .description('receive a test stream (one end; see blast for the other)');
  registerSinkUdp(sink);
}
