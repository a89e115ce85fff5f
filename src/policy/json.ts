import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SockbufError } from '../errors.js';
import { InputLimitError, readBoundedText } from '../sys/bounded-read.js';

/**
 * JSON from peers and files, bounded before it is parsed. V8's JSON.parse recurses on nesting and
 * JSON.stringify of a deeply nested value overflows the stack, so a line such as `[[[[…]]]]` nested
 * 10 000 deep could end a process that merely parsed it and echoed part of it back. A linear scan
 * outside strings measures the depth first; nothing is parsed past the limits.
 */

export const DEFAULT_MAX_JSON_DEPTH = 32;

/** A JSON text refused before parsing: longer or nested deeper than the limit. */
export class JsonLimitError extends SockbufError {
  constructor(
    message: string,
    readonly reason: 'too-long' | 'too-deep',
  ) {
    super(message, 'ERR_SOCKBUF_JSON_LIMIT');
    this.name = 'JsonLimitError';
  }
}

/** The deepest nesting of objects and arrays in `text`, counting only brackets outside strings. */
export function jsonDepth(text: string, stopAt = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) {
        max = depth;
        if (max > stopAt) return max;
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/** JSON.parse after checking size (UTF-16 length, a bound on the characters scanned) and depth. */
export function parseBoundedJson(
  text: string,
  limits: { maxLength?: number; maxDepth?: number } = {},
): unknown {
  const maxDepth = limits.maxDepth ?? DEFAULT_MAX_JSON_DEPTH;
  if (limits.maxLength !== undefined && text.length > limits.maxLength)
    throw new JsonLimitError(`JSON text longer than ${limits.maxLength} characters`, 'too-long');
  if (jsonDepth(text, maxDepth) > maxDepth)
    throw new JsonLimitError(`JSON nested deeper than ${maxDepth} levels`, 'too-deep');
  return JSON.parse(text);
}

/**
 * A JSON file, bounded while it is read (a regular file by its size first; a FIFO or a device by what
 * was read, whatever stat says) and before it is parsed (its depth). Throws JsonLimitError past the
 * limits, the fs error when it cannot be read, SyntaxError when it is not JSON.
 */
export function readBoundedJsonFile(
  file: string | URL,
  limits: { maxBytes: number; maxDepth?: number },
): unknown {
  const tooLong = (what: string) =>
    new JsonLimitError(`${what}, more than the ${limits.maxBytes} a JSON file may have here`, 'too-long');
  const size = statSync(file).size;
  if (size > limits.maxBytes) throw tooLong(`${size} bytes`);
  let text: string;
  try {
    text = readBoundedText(file instanceof URL ? fileURLToPath(file) : file, limits.maxBytes);
  } catch (err) {
    if (err instanceof InputLimitError) throw tooLong('past its size on disk');
    throw err;
  }
  return parseBoundedJson(text, { maxDepth: limits.maxDepth });
}
