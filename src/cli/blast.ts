// `sockbuf blast <proto>`: the sending end of a test (like `iperf3 -c`). One subcommand per protocol.
import type { Command } from 'commander';
import { registerBlastUdp } from './udp.js';

export function register(program: Command): void {
  const blast = program.command('blast').description('send a test stream (one end; see sink for the other)');
  registerBlastUdp(blast);
}
