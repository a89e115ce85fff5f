#!/usr/bin/env node
// api-extractor over each entry's built declarations (dist/*.d.ts: run `npm run build` first), against
// the reports checked in as etc/*.api.md. Without --local a surface that differs from its report fails
// (npm test); with --local (`npm run api`) the reports are rewritten, to review and commit.
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const local = process.argv.includes('--local');
let failed = 0;
for (const name of ['api-extractor.json', 'api-extractor.tools.json', 'api-extractor.dgram.json']) {
  const config = ExtractorConfig.loadFileAndPrepare(new URL(`../etc/${name}`, import.meta.url).pathname);
  const r = Extractor.invoke(config, { localBuild: local, showVerboseMessages: false });
  if (!r.succeeded) {
    failed++;
    console.error(
      `${config.reportFilePath}: ${r.apiReportChanged ? 'the public surface changed: review it and run `npm run api`' : `${r.errorCount} errors`}`,
    );
  }
}
process.exit(failed ? 1 : 0);
