// `sockbuf doctor`: checks the host's buffer sysctls and drop counters against a bandwidth, an RTT and
// a UDP receive-buffer target. Parses options, calls src/doctor, prints. Never writes a sysctl.
import type { Command } from 'commander';
import { VERSION } from '../bench/document.js';
import { SCHEMA } from '../bench/report/results.js';
import { formatTable } from '../bench/table.js';
import { readHostValues } from '../doctor/host.js';
import { diagnose, exitCode, type Finding, PROBLEMS, sysctlConf, type Targets } from '../doctor/rules.js';
import { hostInfo, procRoot } from '../observe/proc.js';
import {
  formatBitRate,
  formatDuration,
  formatSize,
  parseBitRate,
  parseDuration,
  parseSize,
  UsageError,
} from '../policy/units.js';

const show = (v: Finding['value'] | Finding['target']) => (v === null ? '-' : String(v));

export function formatFindings(findings: Finding[], t: Targets, readOnly: boolean): string {
  const rows = findings.map((f) => [f.name, show(f.value), show(f.target), f.status]);
  const out = [
    `sockbuf doctor: ${formatBitRate(t.bitsPerSecond)} at ${formatDuration(t.rttSeconds)} RTT, UDP receive ` +
      `buffer ${formatSize(t.udpRcvbufBytes)}`,
    '',
    formatTable(
      ['check', { title: 'value', align: 'left' }, { title: 'target', align: 'left' }, 'status'],
      rows,
    ),
    '',
  ];
  for (const f of findings) {
    if (f.status === 'ok' || f.status === 'missing') continue;
    const mark = PROBLEMS.includes(f.status) ? '!' : '·';
    out.push(`${mark} ${f.name}: ${f.explanation}`);
    if (f.recommended !== undefined) {
      out.push(
        `    recommended${readOnly ? ' (on the host: /proc/sys is read-only here)' : ''}: ` +
          `sysctl -w ${f.name}=${f.recommended.includes(' ') ? `"${f.recommended}"` : f.recommended}`,
      );
    }
  }
  const n = findings.filter((f) => PROBLEMS.includes(f.status)).length;
  out.push(
    n === 0
      ? 'All checks hold.'
      : `${n} finding${n > 1 ? 's' : ''}. sockbuf never writes a sysctl; --sysctl-conf prints an /etc/sysctl.d file.`,
  );
  return `${out.join('\n')}\n`;
}

export function register(program: Command): void {
  program
    .command('doctor')
    .description("check the host's socket-buffer sysctls and drop counters against a bandwidth and RTT")
    .option('--bandwidth <rate>', 'the link rate one stream should reach', '10gbit')
    .option('--rtt <duration>', 'the round-trip time to plan for', '2ms')
    .option('--udp-rcvbuf <size>', 'the UDP receive buffer wanted (as getsockopt reports it)', '8M')
    .option('--json', 'a sockbuf.v1 JSON document on stdout instead of the table')
    .option('--sysctl-conf', 'print an /etc/sysctl.d file with the recommended values instead of the table')
    .option('--proc-root <path>', 'read this /proc tree instead (default $SOCKBUF_PROC_ROOT or /proc)')
    .action((o: Record<string, string | boolean | undefined>) => {
      const t: Targets = {
        bitsPerSecond: parseBitRate(String(o.bandwidth), '--bandwidth'),
        rttSeconds: parseDuration(String(o.rtt), '--rtt'),
        udpRcvbufBytes: parseSize(String(o.udpRcvbuf), '--udp-rcvbuf'),
      };
      if (!(t.rttSeconds > 0))
        throw new UsageError(`invalid value for --rtt: '${o.rtt}' (expected more than 0)`);
      if (o.json && o.sysctlConf) throw new UsageError('--json and --sysctl-conf: choose one');
      const root = procRoot(typeof o.procRoot === 'string' ? o.procRoot : undefined);
      const h = readHostValues(root);
      const findings = diagnose(h, t);
      if (o.sysctlConf) {
        const by = `written by sockbuf ${VERSION} doctor on ${new Date().toISOString()}`;
        process.stdout.write(sysctlConf(findings, t, h.procSysReadOnly, by));
      } else if (o.json) {
        const doc = {
          schema: SCHEMA,
          version: VERSION,
          command: 'doctor',
          params: { ...t, procRoot: root },
          host: hostInfo(root),
          // scenario: 'doctor' makes each row a row of the sockbuf.v1 schema (docs/results-schema.json)
          results: findings.map((f) => ({ scenario: 'doctor', ...f })),
        };
        process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
      } else {
        process.stdout.write(formatFindings(findings, t, h.procSysReadOnly));
      }
      process.exitCode = exitCode(findings);
    });
}
