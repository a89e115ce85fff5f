// The report's pages with the five seeds of src/bench/seeds: what `sockbuf bench`, `sockbuf report` and a
// program through the public entry render. The page renderers in src/bench/report are given the seeds.
import { htmlPage, type RenderOptions } from './report/html.js';
import type { ResultsDocument } from './report/results.js';
import { textReport } from './report/text.js';
import { SEEDS } from './seeds/index.js';

/** One self-contained HTML page for one or several sockbuf.v1 documents, seed by seed. */
export function renderHtml(input: ResultsDocument | ResultsDocument[], opts: RenderOptions = {}): string {
  return htmlPage(input, SEEDS, opts);
}

/** The tables and one verdict line per seed, as text for stdout. */
export function reportText(doc: ResultsDocument): string {
  return textReport(doc, SEEDS);
}
