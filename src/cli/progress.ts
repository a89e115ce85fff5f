// The progress bar on stderr while a benchmark runs: only when stderr is a TTY, so pipes, files and
// --json consumers never see it.
import cliProgress from 'cli-progress';
import type { Progress } from '../bench/runner.js';

export interface ProgressReporter {
  update(p: Progress): void;
  stop(): void;
}

const NONE: ProgressReporter = { update() {}, stop() {} };

export function progressReporter(stream: NodeJS.WriteStream = process.stderr): ProgressReporter {
  if (!stream.isTTY) return NONE;
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: 'bench [{bar}] {value}/{total} runs | {what}',
      hideCursor: null,
      clearOnComplete: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(p) {
      const what = p.next ? `${p.next.point} (run ${p.next.repeat})` : 'done';
      if (!started) {
        bar.start(p.total, p.done, { what });
        started = true;
      } else bar.update(p.done, { what });
    },
    stop() {
      if (started) bar.stop();
      started = false;
    },
  };
}
