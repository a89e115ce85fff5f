// `sockbuf doctor`: checks the host's buffer sysctls and drop counters against a bandwidth, an RTT and
// a UDP receive-buffer target. Parses options, calls src/doctor, prints. Never writes a sysctl.
import type { Command } from 'commander';
import { VERSION } from '../bench/document.js';
import { SCHEMA } from '../bench/report/results.js';
import { formatTable } from '../bench/table.js';
import { checkHost } from '../doctor/check.js';
import { exitCode, type Finding, PROBLEMS, sysctlConf, type Targets } from '../doctor/rules.js';
import { hostInfo } from '../observe/proc.js';
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

/** The value column: udp_mem in pages and bytes, a counter with what it grew by. */
function shown(f: Finding): [string, string] {
  if (f.valueBytes && f.targetBytes !== undefined)
    return [
      `${f.value} pages = ${f.valueBytes.map((b) => formatSize(b)).join(' ')}`,
      `${f.target} pages = ${formatSize(f.targetBytes)}`,
    ];
  if (f.grew !== undefined && f.since !== 'boot') return [`${f.value} (+${f.grew})`, show(f.target)];
  return [show(f.value), show(f.target)];
}

export function formatFindings(findings: Finding[], t: Targets, readOnly: boolean): string {
  const rows = findings.map((f) => [f.name, ...shown(f), f.status]);
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
    .option(
      '--sample <duration>',
      'count drops over this window instead of since the last run (the history file: $SOCKBUF_DOCTOR_HISTORY)',
    )
    .action(async (o: Record<string, string | boolean | undefined>) => {
      const t: Targets = {
        bitsPerSecond: parseBitRate(String(o.bandwidth), '--bandwidth'),
        rttSeconds: parseDuration(String(o.rtt), '--rtt'),
        udpRcvbufBytes: parseSize(String(o.udpRcvbuf), '--udp-rcvbuf'),
      };
      if (!(t.rttSeconds > 0))
        throw new UsageError(`invalid value for --rtt: '${o.rtt}' (expected more than 0)`);
      if (o.json && o.sysctlConf) throw new UsageError('--json and --sysctl-conf: choose one');
      const sample = typeof o.sample === 'string' ? parseDuration(o.sample, '--sample') : undefined;
      if (sample !== undefined && !(sample > 0))
        throw new UsageError(`invalid value for --sample: '${o.sample}' (expected more than 0)`);
      if (typeof o.procRoot === 'string' && o.procRoot === '')
        throw new UsageError(`invalid value for --proc-root: '' (expected a folder)`);
      const check = await checkHost({
        targets: t,
        procRoot: typeof o.procRoot === 'string' ? o.procRoot : undefined,
        sample: sample === undefined ? undefined : sample * 1000,
      });
      const { findings, procRoot: root, host: h } = check;
      for (const w of check.warnings) process.stderr.write(`sockbuf doctor: ${w}\n`);
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
      // --sysctl-conf printed what was asked for: `doctor --sysctl-conf > f && …` must work
      process.exitCode = o.sysctlConf ? 0 : exitCode(findings);
    });
}
