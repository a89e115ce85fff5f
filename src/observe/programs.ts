// Who set a pinned socket buffer, in that program's own terms, told apart per socket where one
// program has several kinds (beam.smp: RabbitMQ's listeners, osiris's replica sockets, Erlang
// distribution); and a socket's role (listener, accepted, client), which also keys the exporter's
// series. Pure data and lookups: a socket's ports, its owner's command and what listens in its
// network namespace in, an entry out. inspect appends the entry's words to a flag's reason; the
// exporter publishes the entry's id (sockbuf_socket_setter_info) and the alert rules turn the table
// into a template chain on it. Where no entry fits, the callers say the generic setsockopt.
import { OPTIONS } from '../policy/option-registry.js';

/** listener: a listening TCP socket or an unconnected UDP one; accepted: a connection a listener
 * accepted (its listener may be gone); client: a connection this host opened. */
export type SocketRole = 'listener' | 'accepted' | 'client';

/** What the rules need of a socket. */
export interface SocketPlace {
  protocol: 'tcp' | 'udp';
  state: string;
  localPort: number;
  remotePort: number;
}

/** What the rules need of the socket's network namespace. */
export interface PlaceContext {
  /** The TCP ports something listens on. */
  listening: ReadonlySet<number>;
  /** net.ipv4.ip_local_port_range; undefined where it cannot be read. */
  ephemeralPorts?: readonly [number, number];
}

/**
 * The lowest port a peer's ephemeral port is taken from: Linux's default range starts at 32768,
 * the BSDs' and Windows' at 49152.
 */
const PEER_EPHEMERAL_FROM = 32768;

/**
 * A socket's role. A connection is accepted when something listens on its local port, or, with its
 * listener gone (osiris closes its replica listener once the leader connected), when its local port
 * is outside this host's ephemeral range while the peer's looks ephemeral. Pure.
 */
export function socketRole(s: SocketPlace, ctx: PlaceContext): SocketRole {
  if (s.protocol === 'udp') return s.remotePort === 0 ? 'listener' : 'client';
  if (s.state === 'listen') return 'listener';
  if (ctx.listening.has(s.localPort)) return 'accepted';
  const [lo, hi] = ctx.ephemeralPorts ?? [PEER_EPHEMERAL_FROM, OPTIONS.port.max];
  const localEphemeral = s.localPort >= lo && s.localPort <= hi;
  const remoteEphemeral = s.remotePort >= Math.min(lo, PEER_EPHEMERAL_FROM);
  return s.localPort > 0 && !localEphemeral && remoteEphemeral ? 'accepted' : 'client';
}

/** One program, or one kind of socket of a program, that pins buffers, and what to change there. */
export interface Setter {
  /** A stable key: the exporter's `setter` label, the alert rules' template chain. */
  id: string;
  /** /proc/PID/comm (15 characters at most). */
  command: string;
  /** What the program, or this socket of it, is, in words. */
  what: string;
  /** The sockets of the command it covers; none: every socket of the command. */
  matches?: (s: SocketPlace, ctx: PlaceContext) => boolean;
  /** The setting behind a pinned receive buffer, and what to do with it; none: the generic setsockopt. */
  rcvbuf?: string;
  /** The setting behind a pinned send buffer. */
  sndbuf?: string;
  /** For a sender held back by its peer's window (rwnd-limited): who sets the peer's receive buffer. */
  peerRcvbuf?: string;
  /** Its words carry their own ways out (osiris: no setting stops the call), said instead of the generic two. */
  waysOut?: boolean;
}

/** osiris's replica ports: its port_range, 6000–6500 by default (RabbitMQ stream replication). */
export const OSIRIS_PORTS: readonly [number, number] = [6000, 6500];
/** Erlang distribution's port in RabbitMQ: 25672 (the AMQP port + 20000) by default. */
export const ERLANG_DIST_PORT = 25672;

const inRange = (p: number, [lo, hi]: readonly [number, number]) => p >= lo && p <= hi;
const accepted = (s: SocketPlace, ctx: PlaceContext) => socketRole(s, ctx) === 'accepted';
const onListener = (ports: number[]) => (s: SocketPlace, ctx: PlaceContext) =>
  accepted(s, ctx) && ctx.listening.has(s.localPort) && ports.includes(s.localPort);

/**
 * The history behind osiris's advice, checked in rabbitmq/osiris (tags v1.3.1 … v1.10.3, every pull
 * request branch to #203): listener_opts/0 and connect_options/0 set recbuf and sndbuf unconditionally.
 */
const OSIRIS_RELEASES = (sysctl: string, dflt: number) =>
  'osiris 1.3.1 (Debian rabbitmq-server 3.10.8) and every osiris release up to 1.10.3 (January 2026) call setsockopt ' +
  `whatever is configured, so no setting removes the call. Ways out: raise ${sysctl} (to ${dflt} for the default), ` +
  "which keeps it pinned; or an osiris release with seed 000's change (set it only when configured), none up to 1.10.3";

const RABBIT_LISTEN = (key: string, side: 'recbuf' | 'sndbuf') =>
  `RabbitMQ: remove ${key}.${side} from rabbitmq.conf (setting any ${key} key replaces the whole default list: keep nodelay = true)`;

export const SETTERS: readonly Setter[] = [
  {
    id: 'osiris-follower',
    command: 'beam.smp',
    what: "osiris, RabbitMQ stream replication: the follower's replica socket",
    matches: (s, ctx) =>
      accepted(s, ctx) && (inRange(s.localPort, OSIRIS_PORTS) || !ctx.listening.has(s.localPort)),
    rcvbuf:
      'osiris sets it on its replica listener from replica_recbuf (default 2041500; advanced.config {osiris, [{replica_recbuf, N}]}); ' +
      OSIRIS_RELEASES('net.core.rmem_max', 2041500),
    waysOut: true,
  },
  {
    id: 'osiris-leader',
    command: 'beam.smp',
    what: "osiris, RabbitMQ stream replication: the leader's replica reader",
    matches: (s, ctx) => !accepted(s, ctx) && inRange(s.remotePort, OSIRIS_PORTS),
    sndbuf:
      "osiris's replica reader sets it from replica_sndbuf (default 1469880; advanced.config {osiris, [{replica_sndbuf, N}]}); " +
      OSIRIS_RELEASES('net.core.wmem_max', 1469880),
    peerRcvbuf:
      "the follower's osiris sets the receive buffer of its replica socket from replica_recbuf (default 2041500), clamped to 2 × its net.core.rmem_max",
    waysOut: true,
  },
  {
    id: 'erlang-dist-listen',
    command: 'beam.smp',
    what: 'Erlang distribution, an incoming connection',
    matches: (s, ctx) => accepted(s, ctx) && s.localPort === ERLANG_DIST_PORT,
    rcvbuf: 'remove {recbuf, N} from -kernel inet_dist_listen_options (or inet_default_listen_options)',
    sndbuf: 'remove {sndbuf, N} from -kernel inet_dist_listen_options (or inet_default_listen_options)',
  },
  {
    id: 'erlang-dist-connect',
    command: 'beam.smp',
    what: 'Erlang distribution, an outgoing connection',
    matches: (s, ctx) => !accepted(s, ctx) && s.remotePort === ERLANG_DIST_PORT,
    rcvbuf: 'remove {recbuf, N} from -kernel inet_dist_connect_options (or inet_default_connect_options)',
    sndbuf: 'remove {sndbuf, N} from -kernel inet_dist_connect_options (or inet_default_connect_options)',
  },
  {
    id: 'rabbitmq-amqp',
    command: 'beam.smp',
    what: "RabbitMQ's AMQP listener",
    matches: onListener([5672, 5671]),
    rcvbuf: RABBIT_LISTEN('tcp_listen_options', 'recbuf'),
    sndbuf: RABBIT_LISTEN('tcp_listen_options', 'sndbuf'),
  },
  {
    id: 'rabbitmq-stream',
    command: 'beam.smp',
    what: "RabbitMQ's stream listener",
    matches: onListener([5552, 5551]),
    rcvbuf: RABBIT_LISTEN('stream.tcp_listen_options', 'recbuf'),
    sndbuf: RABBIT_LISTEN('stream.tcp_listen_options', 'sndbuf'),
  },
  {
    id: 'erlang-listener',
    command: 'beam.smp',
    what: 'an Erlang VM, a connection on one of its listeners (RabbitMQ, ejabberd, an Elixir app)',
    matches: (s, ctx) => accepted(s, ctx) && ctx.listening.has(s.localPort),
    rcvbuf:
      "RabbitMQ: remove recbuf from that listener's options in rabbitmq.conf: tcp_listen_options for AMQP, stream.tcp_listen_options for streams, " +
      "mqtt. or stomp.tcp_listen_options for those (rabbitmq-diagnostics listeners names each port's protocol; setting any key replaces the whole default list: keep nodelay = true); " +
      'other Erlang programs: drop {recbuf, N} (and {buffer, N}) from the gen_tcp or ranch listen options',
    sndbuf:
      "RabbitMQ: remove sndbuf from that listener's options in rabbitmq.conf: tcp_listen_options for AMQP, stream.tcp_listen_options for streams, " +
      'mqtt. or stomp.tcp_listen_options for those (keep nodelay = true); other Erlang programs: drop {sndbuf, N} from the gen_tcp or ranch listen options',
  },
  {
    id: 'erlang',
    command: 'beam.smp',
    what: 'an Erlang VM (RabbitMQ, ejabberd, an Elixir app)',
    rcvbuf:
      'drop {recbuf, N} (and {buffer, N}) from the gen_tcp or ranch socket options that opened it (or from -kernel inet_default_connect_options)',
    sndbuf:
      'drop {sndbuf, N} from the gen_tcp or ranch socket options that opened it (or from -kernel inet_default_connect_options)',
  },
  {
    id: 'nginx',
    command: 'nginx',
    what: 'nginx',
    rcvbuf: 'remove rcvbuf= from the listen directive',
    sndbuf: 'remove sndbuf= from the listen directive',
  },
  {
    id: 'java',
    command: 'java',
    what: 'a JVM',
    rcvbuf:
      'remove Socket/ServerSocket.setReceiveBufferSize (Netty: ChannelOption.SO_RCVBUF; Kafka: receive.buffer.bytes = -1 for the OS default)',
    sndbuf:
      'remove Socket.setSendBufferSize (Netty: ChannelOption.SO_SNDBUF; Kafka: send.buffer.bytes = -1 for the OS default)',
  },
  {
    id: 'haproxy',
    command: 'haproxy',
    what: 'HAProxy',
    rcvbuf: 'remove tune.rcvbuf.client / tune.rcvbuf.server from the global section',
    sndbuf: 'remove tune.sndbuf.client / tune.sndbuf.server from the global section',
  },
  {
    id: 'node',
    command: 'node',
    what: 'a Node.js program',
    rcvbuf: 'remove the rcvbuf option (sockbuf connect/listen) or the library call that sets SO_RCVBUF',
    sndbuf: 'remove the sndbuf option (sockbuf connect/listen) or the library call that sets SO_SNDBUF',
  },
];

/**
 * The entry for a socket of `command` (`java,java` from a series of two processes counts as
 * `java`): the first whose command and socket match. Undefined for an unknown program. Pure.
 */
export function setterOf(command: string | undefined, s: SocketPlace, ctx: PlaceContext): Setter | undefined {
  if (!command) return undefined;
  const names = new Set(command.split(','));
  return SETTERS.find((p) => names.has(p.command) && (!p.matches || p.matches(s, ctx)));
}
