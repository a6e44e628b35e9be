// Prints the per-file scores and the surviving mutants of a Stryker JSON report
// (coverage/mutation/mutation.json by default), as docs/reliability.md lists them:
//   node test/mutation/summary.mjs [report.json ...]
// Several reports (one per `--mutate` run) are merged; a file reported twice keeps its last run.
import { readFileSync } from 'node:fs';
import console from 'node:console';
import process from 'node:process';

const reports = process.argv.length > 2 ? process.argv.slice(2) : ['coverage/mutation/mutation.json'];
const files = new Map();
for (const path of reports) {
  const report = JSON.parse(readFileSync(path, 'utf8'));
  for (const [file, result] of Object.entries(report.files)) files.set(file, result);
}

const count = (mutants, status) => mutants.filter((m) => m.status === status).length;
console.log('| File | Mutants | Killed | Survived | Timeout | No coverage | Score |');
console.log('| --- | --- | --- | --- | --- | --- | --- |');
const survivors = [];
for (const [file, { mutants, source }] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
  const killed = count(mutants, 'Killed');
  const survived = count(mutants, 'Survived');
  const timeout = count(mutants, 'Timeout');
  const none = count(mutants, 'NoCoverage');
  const valid = killed + survived + timeout + none;
  const score = valid === 0 ? 'n/a' : `${((100 * (killed + timeout)) / valid).toFixed(1)} %`;
  console.log(`| ${file} | ${valid} | ${killed} | ${survived} | ${timeout} | ${none} | ${score} |`);
  const lines = source.split('\n');
  for (const m of mutants.filter((m) => m.status === 'Survived' || m.status === 'NoCoverage')) {
    const { line, column } = m.location.start;
    const original = (lines[line - 1] ?? '').trim();
    survivors.push(
      `${file}:${line}:${column} ${m.status} ${m.mutatorName}: ${JSON.stringify(m.replacement)} (in: ${original})`,
    );
  }
}
console.log('');
for (const s of survivors) console.log(s);
