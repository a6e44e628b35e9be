import { describe, expect, it } from '@jest/globals';
import { DEMO_MAIN, runCli, type CliResult } from './run-cli.js';

/** One line on stderr, naming the problem, no stack trace. */
function expectOneLine(result: CliResult, pattern: RegExp): void {
  expect(result.code).toBe(2);
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^chamvi: /);
  expect(lines[0]).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

// Each case is a CLI process (about 2 s to load under tsx); they run at once to keep the suite quick.
describe('chamvi usage', () => {
  it('--help on each command prints its usage and exits 0; no command is exit 2', async () => {
    const commands = ['worker', 'run', 'effects', 'show', 'approvals', 'approve'];
    const [main, none, ...each] = await Promise.all([
      runCli(['--help']),
      runCli([]),
      ...commands.map((c) => runCli([c, '--help'])),
    ]);
    expect(main?.code).toBe(0);
    for (const c of commands) expect(main?.stdout).toContain(`  ${c} `);
    expect(none?.code).toBe(2);
    each.forEach((result, i) => {
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`Usage: chamvi ${commands[i] ?? ''}`);
      expect(result.stderr).toBe('');
    });
  });

  it('bad flags, malformed store URLs and unreachable servers: one clear line, exit 2', async () => {
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['frobnicate'], {}, /unknown command "frobnicate"/],
      [['run', 'responder', '--promt', 'x'], {}, /run: Unknown option '--promt'/],
      [['run', 'responder'], {}, /run: --prompt is required/],
      [['worker', '--store', 'x.db'], {}, /worker: --agents is required/],
      [['effects', 'abc', '--store', 'mysql://h/db'], {}, /effects: bad --store: Unknown effect store scheme "mysql:"/],
      [['worker', '--agents', 'x.js', '--store', 'postgres:nohost'], {}, /worker: bad --store: .*not a PostgreSQL URL/],
      [['effects', 'abc'], { CHAMVI_STORE: 'memory:' }, /effects: the memory store lives in one process only/],
      [['worker', '--agents', 'cli/table.ts', '--store', 'sqlite::memory:'], {}, /exports no agents/],
      [
        ['run', 'responder', '--prompt', 'hi'],
        { TEMPORAL_ADDRESS: '127.0.0.1:1' },
        /cannot reach the Temporal server at 127\.0\.0\.1:1/,
      ],
    ];
    const results = await Promise.all(cases.map(([args, env]) => runCli(args, env)));
    results.forEach((result, i) => expectOneLine(result, cases[i]![2]));
  }, 90_000);

  it("the repository's demo (npm start, not a command of the package) answers --help and usage errors the same way", async () => {
    const [help, issues, unreachable] = await Promise.all([
      runCli(['--help'], {}, 60_000, DEMO_MAIN),
      runCli(['--issues', 'many'], {}, 60_000, DEMO_MAIN),
      runCli([], { TEMPORAL_ADDRESS: '127.0.0.1:1' }, 60_000, DEMO_MAIN),
    ]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: npm start');
    expectOneLine(issues, /demo: --issues must be a whole number/);
    expectOneLine(unreachable, /cannot reach the Temporal server at 127\.0\.0\.1:1 \(TEMPORAL_ADDRESS\)/);
  }, 90_000);
});
