// Counts the public API in the committed reports (etc/api/*.api.md, written by `npm run api -- --local`):
// the exported names of each entry point, the names exported by more than one, and the reports' warnings.
//   node scripts/api-count.js           a table, one line per entry point
//   node scripts/api-count.js --json    the same as JSON (what test/entry-points/public-surface.test.ts reads)
//   node scripts/api-count.js DIR       the reports in DIR instead of etc/api
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import console from 'node:console';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const DECLARATION =
  /^export (?:declare )?(?:abstract )?(?:class|const|function|interface|type|enum|namespace|let|var) ([A-Za-z_$][\w$]*)/;

/** The entry point a report describes: chamvi-temporal-stores-sqlite.api.md -> "./stores/sqlite". */
function entryPointOf(file) {
  const rest = file.replace(/^chamvi-temporal/, '').replace(/\.api\.md$/, '');
  return rest === '' ? '.' : `./${rest.slice(1).replaceAll('-', '/')}`;
}

/** Per entry point: its exported names (overloads counted once) and the API Extractor warnings in its report. */
export function countReports(dir) {
  const entries = {};
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.api.md'))) {
    const names = new Set();
    const warnings = {};
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const declared = DECLARATION.exec(line);
      if (declared !== null) names.add(declared[1]);
      const warning = /\((ae-[a-z-]+)\)/.exec(line);
      if (warning !== null) warnings[warning[1]] = (warnings[warning[1]] ?? 0) + 1;
    }
    entries[entryPointOf(file)] = { names: [...names].sort(), warnings };
  }
  const owners = new Map();
  for (const [entry, { names }] of Object.entries(entries)) {
    for (const name of names) owners.set(name, [...(owners.get(name) ?? []), entry]);
  }
  const shared = Object.fromEntries([...owners].filter(([, where]) => where.length > 1).sort());
  const total = Object.values(entries).reduce((sum, e) => sum + e.names.length, 0);
  return { entries, shared, total, distinct: owners.size };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const dir = args.find((a) => !a.startsWith('--')) ?? fileURLToPath(new URL('../etc/api', import.meta.url));
  const counted = countReports(dir);
  if (args.includes('--json')) {
    console.log(JSON.stringify(counted, null, 2));
  } else {
    for (const [entry, { names, warnings }] of Object.entries(counted.entries)) {
      const noted = Object.entries(warnings).map(([w, n]) => `${n} ${w}`);
      console.log(
        `${entry.padEnd(18)} ${String(names.length).padStart(4)}${noted.length > 0 ? `  (${noted.join(', ')})` : ''}`,
      );
    }
    console.log(
      `${'total'.padEnd(18)} ${String(counted.total).padStart(4)}  (${counted.distinct} distinct names, ${Object.keys(counted.shared).length} exported from more than one entry point)`,
    );
  }
}
