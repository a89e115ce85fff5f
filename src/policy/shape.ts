// What a caller from plain JavaScript can pass that the types would have refused: an options object
// that is not one, a host that is not a string, a port that is not a whole number, a callback that is
// not a function. Each check throws a UsageError naming the option and the value, so that a wrong
// shape is a SockbufError (exit 2 in the CLI), never a TypeError from deep inside. Pure.
import { UsageError } from '../errors.js';
import { OPTIONS } from './option-registry.js';
import { shown } from './shown.js';

/** An options object (a plain object, not null, an array or a string), or a UsageError naming `name`. */
export function checkObject(value: unknown, name = 'options'): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw UsageError.invalid(name, shown(value), 'an options object');
  return value as Record<string, unknown>;
}

/** `checkObject` when given; `{}` for undefined. */
export function checkOptionalObject(value: unknown, name = 'options'): Record<string, unknown> {
  return value === undefined ? {} : checkObject(value, name);
}

/** A host: an address or a name, as a non-empty string. */
export function checkHost(value: unknown, name = 'host'): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw UsageError.invalid(name, shown(value), 'an IP address or a host name, as a string');
  return value;
}

/** A port number from `min` (0 where a socket listens: any free port) to the registry's largest. */
export function checkPort(value: unknown, name = 'port', min = 0): number {
  const { max } = OPTIONS.port;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw UsageError.invalid(name, shown(value), `a port number from ${min} to ${max}`);
  return value;
}

/** `{ host, port }` (or `{ address, port }`, as node:dgram's rinfo), checked. */
export function checkHostPort(value: unknown, name: string, minPort = 0): { host: string; port: number } {
  const o = checkObject(value, name);
  const host = 'host' in o || !('address' in o) ? o.host : o.address;
  return { host: checkHost(host, `${name}.host`), port: checkPort(o.port, `${name}.port`, minPort) };
}

/** A function (a callback), or a UsageError. */
export function checkFunction<F>(value: unknown, name: string): F {
  if (typeof value !== 'function') throw UsageError.invalid(name, shown(value), 'a function');
  return value as F;
}

/** A whole number from `min` (a descriptor, a count), or a UsageError; undefined passes when `optional`. */
export function checkWholeNumber(value: unknown, name: string, min = 0): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
    throw UsageError.invalid(name, shown(value), `a whole number from ${min}`);
  return value;
}

/** A finite number more than 0 (seconds, a rate), or a UsageError. */
export function checkPositive(value: unknown, name: string, unit: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw UsageError.invalid(name, shown(value), `a number of ${unit} more than 0`);
  return value;
}

/** A finite number of at least 0, or a UsageError. */
export function checkNonNegative(value: unknown, name: string, unit: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw UsageError.invalid(name, shown(value), `a number of ${unit} from 0`);
  return value;
}

/** A Buffer or Uint8Array, or a UsageError. */
export function checkBytes(value: unknown, name: string): Uint8Array {
  if (!(value instanceof Uint8Array)) throw UsageError.invalid(name, shown(value), 'a Buffer or Uint8Array');
  return value;
}
