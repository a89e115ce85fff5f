// The conformance harness: each case runs against node:dgram and against `sockbuf/dgram` (the built
// package, through its exports, as an application imports it) and records what it saw: events in
// order, return values, errors (class, code, message, errno, syscall, address, port). The two records
// must be equal, and node:dgram's must equal the case's pinned record, so a case that observes nothing
// (or a Node that changed) fails too. Ports the kernel picks are replaced by 'PORT'.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export type CreateSocket = typeof dgram.createSocket;

/** `sockbuf/dgram` as an application gets it (dist/, through package.json's exports). */
export async function sockbufDgram(): Promise<{ createSocket: CreateSocket }> {
  assert.ok(existsSync(`${ROOT}dist/dgram.js`), 'dist/dgram.js: run npm run build');
  const name = 'sockbuf/dgram';
  return (await import(name)) as { createSocket: CreateSocket };
}

/** An error as a record: what code compares (its class, code, message …), ports normalised. */
export function describe(e: unknown): Record<string, unknown> {
  if (!(e instanceof Error)) return { notAnError: String(e) };
  const x = e as Error & Record<string, unknown>;
  const cls = e instanceof RangeError ? 'RangeError' : e instanceof TypeError ? 'TypeError' : 'Error';
  const out: Record<string, unknown> = { class: cls, name: e.name, code: x.code, message: norm(e.message) };
  for (const k of ['errno', 'syscall', 'address', 'port', 'hostname'] as const)
    if (k in x) out[k] = k === 'port' ? 'PORT' : x[k];
  return out;
}

/** Replaces kernel-chosen ports (:12345, "port": 12345) in text. */
export const norm = (s: string) => s.replace(/:(\d{4,5})\b/g, ':PORT');

/** What calling `f` did: 'ok' (or its value) or the error it threw. */
export function attempt(f: () => unknown): unknown {
  try {
    const v = f();
    return v === undefined || typeof v === 'object' ? 'ok' : v;
  } catch (e) {
    return describe(e);
  }
}

/** An address() record with the port normalised. */
export const addr = (a: { address: string; family: string; port: number }) => ({
  address: a.address,
  family: a.family,
  port: a.port > 0 ? 'PORT' : a.port,
});

/** Resolves with the arguments of the next `event`, or rejects after `ms`. */
export function next(em: NodeJS.EventEmitter, event: string, ms = 5000): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no '${event}' within ${ms} ms`)), ms);
    em.once(event, (...args: unknown[]) => {
      clearTimeout(t);
      resolve(args);
    });
  });
}

export const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

/** A bound node:dgram socket (the peer of a case; never the socket under test). */
export async function peer(type: 'udp4' | 'udp6' = 'udp4'): Promise<dgram.Socket> {
  const s = dgram.createSocket(type);
  await new Promise<void>((r) => s.bind(0, type === 'udp4' ? '127.0.0.1' : '::1', r));
  return s;
}

export interface Case {
  name: string;
  /** Runs against one implementation; returns what it observed. Must close what it opened. */
  run: (create: CreateSocket) => Promise<unknown>;
  /** What node:dgram gives (Node 20), pinned. */
  expect: unknown;
}

/** Registers one test per case: sockbuf's record equals node:dgram's, and node's equals the pinned one. */
export function conformance(cases: Case[]): void {
  for (const c of cases) {
    test(`dgram conformance: ${c.name}`, async () => {
      const ours = await sockbufDgram();
      const node = await c.run(dgram.createSocket);
      assert.deepEqual(node, c.expect, 'node:dgram itself no longer gives the pinned record');
      const got = await c.run(ours.createSocket);
      assert.deepEqual(got, node, 'sockbuf/dgram differs from node:dgram');
    });
  }
}
