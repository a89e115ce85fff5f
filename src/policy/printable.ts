// Text that came from input (a results file, a peer, a command line), made safe to print: every control
// character is shown escaped instead of reaching the terminal, so a string carrying ESC sequences cannot
// retitle the terminal, move the cursor or hide what was written before it. Pure.

// C0 (U+0000–U+001F, with tab and newline: input text is printed on one line), DEL, C1 (U+0080–U+009F),
// the line and paragraph separators, and the bidirectional marks, embeddings, overrides and isolates,
// which reorder what a reader sees (the "Trojan Source" characters).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

const escaped = (ch: string) => {
  const code = ch.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
};

/** `text` with each control character written as an escape: ESC as `\x1b`, U+202E as `\u202e`. */
export function printable(text: string): string {
  return text.replace(CONTROL, escaped);
}

// What JSON.stringify writes raw: it escapes C0 only.
const RAW_IN_JSON = /[\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/**
 * JSON text (as JSON.stringify writes it) with the control characters JSON.stringify leaves raw (DEL, C1,
 * the separators, the bidi controls) written as \u escapes: the same JSON value, safe on a terminal.
 */
export function printableJson(json: string): string {
  return json.replace(RAW_IN_JSON, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
