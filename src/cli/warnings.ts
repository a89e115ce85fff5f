// The CLI's warnings: one line each on stderr, `sockbuf: warning: …`, in place of Node's default
// printer (`(node:PID) [CODE] Warning: …` and its "(Use `node --trace-warnings ...`)" hint). The library
// keeps process.emitWarning, so that an application's own 'warning' handler decides what to do with
// them; the CLI is such an application.
import { printable } from '../policy/printable.js';

/** Replaces Node's warning printer (and any other 'warning' listener) with the CLI's one-line warnings. */
export function installWarnings(write: (line: string) => void = (l) => process.stderr.write(l)): void {
  process.removeAllListeners('warning');
  process.on('warning', (w: Error & { code?: string }) => {
    // the library's own say what they are by their code (SOCKBUF_*); Node's and other libraries' keep
    // their class name (DeprecationWarning: …)
    const kind = w.name === 'Warning' || w.code?.startsWith('SOCKBUF_') ? '' : `${w.name}: `;
    write(`sockbuf: warning: ${printable(kind + w.message)}\n`);
  });
}
