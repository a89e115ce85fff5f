// Text that came from input (a results file, a peer, a command line), made safe to print: every control
// character is shown escaped instead of reaching the terminal, so a string carrying ESC sequences cannot
// retitle the terminal, move the cursor or hide what was written before it. Pure.

// Every control character (Cc: C0 with tab and newline, as input text is printed on one line, DEL, C1),
// every format character (Cf: the bidirectional marks, embeddings, overrides and isolates that reorder
// what a reader sees — the "Trojan Source" characters — U+061C, the zero-width characters, the BOM,
// the tag characters), and the line and paragraph separators.
const CONTROL = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;

const escaped = (ch: string) => {
  const code = ch.codePointAt(0) as number;
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/** `text` with each control character written as an escape: ESC as `\x1b`, U+202E as `\u202e`. */
export function printable(text: string): string {
  return text.replace(CONTROL, escaped);
}

// What JSON.stringify writes raw: it escapes C0 only.
const RAW_IN_JSON = /[\u007f-\u009f\p{Cf}\u2028\u2029]/gu;

/**
 * JSON text (as JSON.stringify writes it) with the control characters JSON.stringify leaves raw (DEL, C1,
 * the separators, the bidi controls) written as \u escapes: the same JSON value, safe on a terminal.
 */
export function printableJson(json: string): string {
  // a character beyond U+FFFF (a tag) is written as its two UTF-16 halves, as JSON does
  const unit = (c: number) => `\\u${c.toString(16).padStart(4, '0')}`;
  return json.replace(RAW_IN_JSON, (ch) =>
    [...Array(ch.length).keys()].map((i) => unit(ch.charCodeAt(i))).join(''),
  );
}
