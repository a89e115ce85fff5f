// What to change, in a known program's own terms, when it pinned a socket buffer: the setting that
// makes it call setsockopt(SO_RCVBUF/SO_SNDBUF). Keyed by the command name the kernel shows
// (/proc/PID/comm, as inspect and sockbuf_socket_owner_info report it). Pure data and lookups; the
// alert rules turn the table into a template chain, inspect appends the line to its reason.

export interface KnownProgram {
  /** /proc/PID/comm (15 characters at most). */
  command: string;
  /** What the program is, in words. */
  what: string;
  /** The setting behind a pinned receive buffer, and what to do with it. */
  rcvbuf: string;
  /** The setting behind a pinned send buffer. */
  sndbuf: string;
}

export const KNOWN_PROGRAMS: readonly KnownProgram[] = [
  {
    command: 'beam.smp',
    what: 'an Erlang VM (RabbitMQ, ejabberd, an Elixir app)',
    rcvbuf:
      'RabbitMQ: remove tcp_listen_options.recbuf from rabbitmq.conf (setting any tcp_listen_options key replaces the whole default list: keep nodelay = true); other Erlang programs: drop {recbuf, N} (and {buffer, N}) from the gen_tcp or ranch socket options',
    sndbuf:
      'RabbitMQ: remove tcp_listen_options.sndbuf from rabbitmq.conf (keep nodelay = true); other Erlang programs: drop {sndbuf, N} from the gen_tcp or ranch socket options',
  },
  {
    command: 'nginx',
    what: 'nginx',
    rcvbuf: 'remove rcvbuf= from the listen directive',
    sndbuf: 'remove sndbuf= from the listen directive',
  },
  {
    command: 'java',
    what: 'a JVM',
    rcvbuf:
      'remove Socket/ServerSocket.setReceiveBufferSize (Netty: ChannelOption.SO_RCVBUF; Kafka: receive.buffer.bytes = -1 for the OS default)',
    sndbuf:
      'remove Socket.setSendBufferSize (Netty: ChannelOption.SO_SNDBUF; Kafka: send.buffer.bytes = -1 for the OS default)',
  },
  {
    command: 'haproxy',
    what: 'HAProxy',
    rcvbuf: 'remove tune.rcvbuf.client / tune.rcvbuf.server from the global section',
    sndbuf: 'remove tune.sndbuf.client / tune.sndbuf.server from the global section',
  },
  {
    command: 'node',
    what: 'a Node.js program',
    rcvbuf: 'remove the rcvbuf option (sockbuf connect/listen) or the library call that sets SO_RCVBUF',
    sndbuf: 'remove the sndbuf option (sockbuf connect/listen) or the library call that sets SO_SNDBUF',
  },
];

/** The entry for a command (`java,java` from a series of two processes counts as `java`), or undefined. */
export function knownProgram(command: string | undefined): KnownProgram | undefined {
  if (!command) return undefined;
  const names = new Set(command.split(','));
  return KNOWN_PROGRAMS.find((p) => names.has(p.command));
}
