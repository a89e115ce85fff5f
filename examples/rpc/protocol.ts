// The wire format of the RPC example: each message is one frame (u32 big-endian length + payload, as
// sockbuf's FrameDecoder/encodeFrame speak it) whose payload is a JSON object. A request is
// { id, method, params }, a reply { id, result } or { id, error }. Ids let a client keep many calls in
// flight on one connection; replies may come back in any order.
import { encodeFrame } from 'sockbuf';

export interface Request {
  id: number;
  method: string;
  params?: unknown;
}

export type Reply = { id: number; result: unknown } | { id: number; error: string };

const decoder = new TextDecoder();

/** A message as one frame, ready for socket.write(). */
export const encode = (message: Request | Reply): Uint8Array =>
  encodeFrame(Buffer.from(JSON.stringify(message), 'utf8'));

/** A frame's payload (a view valid only during the handler) as a message. */
export const decode = <T>(payload: Uint8Array): T => JSON.parse(decoder.decode(payload)) as T;
