// The docs' knobs table and Operations pages against the code they describe: the activity
// defaults, the metric names, the agent search attribute, the connection and codec settings.
import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EFFECT_METRICS } from '../../activities/effect-telemetry.js';
import {
  DEFAULT_MODEL_STEP_OPTIONS,
  DEFAULT_STORE_OPTIONS,
  DEFAULT_TOOL_OPTIONS,
  type JsonActivityOptions,
} from '../../common/activity-options.js';
import { AGENT_SEARCH_ATTRIBUTE } from '../../client/start-agent-run.js';
import { POLLER_WAIT_MS } from '../../cli/pollers.js';
import { docPage } from '../docs/docs-pages.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OPERATIONS = ['deployment', 'stores', 'retention', 'metrics', 'tracing-setup', 'temporal-cloud', 'codecs'];

/** A Temporal duration string as the docs write it: `10 minutes` → `10 min`, `30 seconds` → `30 s`. */
function short(duration: string | number | undefined): string {
  const text = String(duration);
  return text.replace(/ minutes?$/, ' min').replace(/ seconds?$/, ' s');
}

/** What the knobs table must say of a layer of defaults. */
function described(options: JsonActivityOptions): string[] {
  const retry = options.retry ?? {};
  const attempts = retry.maximumAttempts === undefined ? 'unlimited attempts' : `${retry.maximumAttempts} attempts`;
  return [
    `\`startToCloseTimeout\` ${short(options.startToCloseTimeout)}`,
    ...(options.heartbeatTimeout !== undefined ? [`\`heartbeatTimeout\` ${short(options.heartbeatTimeout)}`] : []),
    `retry ${short(retry.initialInterval)} doubling to ${short(retry.maximumInterval)}, ${attempts}`,
  ];
}

describe("the docs' knobs table and Operations pages", () => {
  it('the knobs table gives the defaults the code has, for tools, model steps and the record activity', () => {
    const table = docPage('operations/timeouts.md');
    const row = (name: string): string => table.split('\n').find((line) => line.startsWith(`| ${name}`)) ?? '';
    expect(DEFAULT_TOOL_OPTIONS.retry?.backoffCoefficient).toBe(2);
    for (const part of described(DEFAULT_TOOL_OPTIONS)) expect(row('tool calls')).toContain(part);
    for (const part of described(DEFAULT_MODEL_STEP_OPTIONS)) expect(row('model steps')).toContain(part);
    for (const part of described(DEFAULT_STORE_OPTIONS)) expect(row('the record activity')).toContain(part);
    for (const knob of [
      'toolDefaults',
      'tools[toolName]',
      'activityOptions.modelStep',
      'abortGraceMs',
      'workerOptions',
    ])
      expect(table).toContain(knob);
    // What options.abortSignal means, and an example passing it on.
    expect(table).toContain('**`options.abortSignal`**');
    expect(table).toContain('signal: abortSignal');
  });

  it('Operations documents logs, every metric by name, tracing, envconfig, search attributes and the codec', () => {
    const operations = OPERATIONS.map((page) => docPage(`operations/${page}.md`)).join('\n');
    for (const name of Object.values(EFFECT_METRICS)) expect(operations).toContain(`\`${name}\``);
    for (const part of [
      '## Logs',
      'Context.current().metricMeter',
      'prometheus: { bindAddress',
      '@temporalio/interceptors-opentelemetry',
      '@temporalio/envconfig',
      'TEMPORAL_CONFIG_FILE',
      'api_key',
      `\`${AGENT_SEARCH_ATTRIBUTE}\``,
      `temporal operator search-attribute create --name ${AGENT_SEARCH_ATTRIBUTE} --type Keyword`,
      `--search-attribute ${AGENT_SEARCH_ATTRIBUTE}=Keyword`,
      '--data-converter',
      `within ${POLLER_WAIT_MS / 1000} s`,
    ])
      expect({ part, found: operations.includes(part) }).toEqual({ part, found: true });
  });

  it("Tracing shows examples/tracing/tracing.ts as it is, and pins versions this repository's tests run with", () => {
    const tracing = docPage('operations/tracing-setup.md');
    const block = /<!-- file: examples\/tracing\/tracing.ts -->\n+```ts\n([\s\S]*?)\n```\n/.exec(tracing)?.[1];
    expect(block).toBe(readFileSync(join(ROOT, 'examples/tracing/tracing.ts'), 'utf8').replace(/\n$/, ''));
    const install = /```sh\n(npm install [\s\S]*?)\n```/.exec(tracing)?.[1] ?? '';
    const pinned = [...install.matchAll(/(@?[\w./-]+)@(\^?[\d.]+)/g)].map((m) => ({
      name: m[1] ?? '',
      range: m[2] ?? '',
    }));
    expect(pinned.map((p) => p.name)).toEqual(
      expect.arrayContaining([
        '@opentelemetry/sdk-trace-node',
        '@temporalio/interceptors-opentelemetry',
        '@ai-sdk/otel',
      ]),
    );
    const installed = (name: string): string | undefined => {
      const file = join(ROOT, 'node_modules', name, 'package.json');
      return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version : undefined;
    };
    // Every pinned package the tests install satisfies its pin (the OTLP exporter is not installed here).
    const checked = pinned.filter((p) => installed(p.name) !== undefined);
    expect(checked.length).toBeGreaterThanOrEqual(6);
    for (const { name, range } of checked) {
      expect({ name, range, satisfied: satisfies(installed(name) ?? '', range) }).toEqual({
        name,
        range,
        satisfied: true,
      });
    }
  });
});

/** Whether `version` is in `range`: an exact version, or a caret range (same major, not older). */
function satisfies(version: string, range: string): boolean {
  const parts = (v: string) => v.split('.').map(Number);
  if (!range.startsWith('^')) return version === range;
  const [want, have] = [parts(range.slice(1)), parts(version)];
  if (have[0] !== want[0]) return false;
  for (let i = 0; i < want.length; i++) {
    if ((have[i] ?? 0) !== (want[i] ?? 0)) return (have[i] ?? 0) > (want[i] ?? 0);
  }
  return true;
}
