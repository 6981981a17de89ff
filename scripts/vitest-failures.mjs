// Reads vitest's JSON report (--reporter=json) for the failed tests, so that scripts/test-parallel.mjs
// can name them in its last lines. A file that failed outside any test (an import error, a hook) is
// named as the file itself.

/** @returns {{ file: string, test: string, message: string }[]} */
export function failuresOf(reportText) {
  const report = JSON.parse(reportText);
  const out = [];
  for (const file of report.testResults ?? []) {
    const failed = (file.assertionResults ?? []).filter((a) => a.status === 'failed');
    for (const a of failed) out.push({ file: file.name, test: a.fullName ?? a.title, message: (a.failureMessages ?? []).join('\n') });
    if (failed.length === 0 && file.status === 'failed') out.push({ file: file.name, test: '(the file itself)', message: file.message ?? '' });
  }
  return out;
}
