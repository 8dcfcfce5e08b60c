// Adds up vitest's JSON reports into one closing line: "tests: N passed, N failed, N skipped".
// A missing report (a run that never got to its tests) counts as a failure.
import { existsSync, readFileSync } from 'node:fs'

let passed = 0
let failed = 0
let skipped = 0
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) {
    console.log(`${file}: no report`)
    failed += 1
    continue
  }
  const r = JSON.parse(readFileSync(file, 'utf8'))
  passed += r.numPassedTests
  failed += r.numFailedTests + (r.numFailedTestSuites ?? 0)
  skipped += r.numPendingTests + (r.numTodoTests ?? 0)
}
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`)
process.exit(failed > 0 || passed === 0 ? 1 : 0)
