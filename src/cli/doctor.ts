// `sockbuf doctor`: checks the host's buffer sysctls and drop counters against a bandwidth, an RTT and
// a UDP receive-buffer target. Parses options, calls diagnose(), prints. Never writes a sysctl.
import type { Command } from 'commander';
import { diagnose } from '../doctor/diagnose.js';
import { UsageError } from '../errors.js';
import { printable } from '../policy/printable.js';
import { declared } from './declared.js';
import { printableText } from './lines.js';

export function register(program: Command): void {
  program
    .command('doctor')
    .description("check the host's socket-buffer sysctls and drop counters against a bandwidth and RTT")
    .addOption(declared('bandwidth'))
    .addOption(declared('rtt', 'the round-trip time to plan for'))
    .addOption(declared('udpRcvbuf'))
    .option('--json', 'a sockbuf.v1 JSON document on stdout instead of the table')
    .option('--sysctl-conf', 'print an /etc/sysctl.d file with the recommended values instead of the table')
    .option('--proc-root <path>', 'read this /proc tree instead (default $SOCKBUF_PROC_ROOT or /proc)')
    .addOption(declared('sample'))
    .action(async (o: Record<string, string | number | boolean | undefined>) => {
      if (o.json && o.sysctlConf) throw new UsageError('--json and --sysctl-conf: choose one');
      const d = await diagnose({
        bandwidth: Number(o.bandwidth),
        rtt: Number(o.rtt),
        udpRcvbuf: Number(o.udpRcvbuf),
        procRoot: typeof o.procRoot === 'string' ? o.procRoot : undefined,
        sample: o.sample === undefined ? undefined : Number(o.sample),
      });
      for (const w of d.warnings) process.stderr.write(`sockbuf: warning: ${printable(w)}\n`);
      if (o.sysctlConf) process.stdout.write(d.sysctlConf());
      else if (o.json) process.stdout.write(`${JSON.stringify(d.document(), null, 2)}\n`);
      else process.stdout.write(printableText(d.text()));
      // --sysctl-conf printed what was asked for: `doctor --sysctl-conf > f && …` must work; nothing
      // read is no all-clear, for either (3: the environment did not let it look)
      process.exitCode = d.readNothing ? 3 : !o.sysctlConf && d.problems ? 1 : 0;
    });
}
