// The destinations of a sender's batches: each target given to sendBatch (an rinfo-shaped object, a
// { host, port } or 'HOST:PORT') parsed and its sockaddr encoded once, so that a batch with one
// destination per datagram costs a comparison per datagram, not a parse.
import { encodeSockaddr } from '../sys/sockaddr.js';
import { parseTarget, type UdpTarget } from './sender-options.js';

/** A destination, its sockaddr encoded once. The same address and port give the same object. */
export interface Dest {
  host: string;
  port: number;
  sa: Buffer;
}

const LIMIT = 4096;

export class Destinations {
  private readonly byKey = new Map<string, Dest>();
  private lastTarget: UdpTarget | undefined;
  private lastDest: Dest | undefined;

  /** The destination of `t` (`option` names it in a UsageError when it is not an address and port). */
  get(t: UdpTarget, option: string): Dest {
    if (t === this.lastTarget && this.lastDest) return this.lastDest;
    let d: Dest | undefined;
    if (typeof t === 'string') d = this.byKey.get(t);
    else if (t !== null && typeof t === 'object') {
      const host = 'address' in t ? t.address : t.host;
      const last = this.lastDest;
      if (last && last.host === host && last.port === t.port) d = last;
      else d = this.byKey.get(`${host}|${t.port}`);
    }
    if (!d) {
      const hp = parseTarget(t, option);
      const key = `${hp.host}|${hp.port}`;
      d = this.byKey.get(key) ?? { host: hp.host, port: hp.port, sa: encodeSockaddr(hp) };
      if (this.byKey.size > LIMIT) this.byKey.clear();
      this.byKey.set(key, d);
      if (typeof t === 'string') this.byKey.set(t, d);
    }
    this.lastTarget = t;
    this.lastDest = d;
    return d;
  }
}
