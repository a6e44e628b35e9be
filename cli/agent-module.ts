import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isAgent } from '../src/agent/define-agent.js';
import type { AgentEntry } from '../worker/index.js';
import { UsageError } from './usage-error.js';

/** True for an agent or a registration (`{ agent, tools?, toolDefaults?, allow? }`). */
function isEntry(value: unknown): value is AgentEntry {
  if (isAgent(value)) return true;
  return typeof value === 'object' && value !== null && 'agent' in value && isAgent(value.agent);
}

/**
 * The agents a module exports: a default export that is an array of agents or registrations (or
 * one of them), or else every named export that is one. A module may also export a function
 * `agents()` (sync or async) returning such an array, for setup that needs to run first.
 */
export function agentsOf(module: Record<string, unknown>): AgentEntry[] {
  const pick = (value: unknown): AgentEntry[] | undefined => {
    if (Array.isArray(value) && value.length > 0 && value.every(isEntry)) return value;
    if (isEntry(value)) return [value];
    return undefined;
  };
  const fromDefault = pick(module['default']);
  if (fromDefault !== undefined) return fromDefault;
  return Object.entries(module)
    .filter(([name]) => name !== 'default')
    .flatMap(([, value]) => pick(value) ?? []);
}

/** Imports the module at `specifier` (a path relative to the working directory, or a package name). */
export async function loadAgents(command: string, specifier: string): Promise<AgentEntry[]> {
  const path = resolve(specifier);
  const target = existsSync(path) ? pathToFileURL(path).href : specifier;
  let module: Record<string, unknown>;
  try {
    module = (await import(target)) as Record<string, unknown>;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new UsageError(`${command}: cannot load the agents module "${specifier}" (${reason})`);
  }
  if (typeof module['agents'] === 'function') {
    module = { default: await (module['agents'] as () => unknown)() };
  }
  const agents = agentsOf(module);
  if (agents.length === 0) {
    throw new UsageError(
      `${command}: "${specifier}" exports no agents; export defineAgent(...) results, or a default array of agents or { agent, tools } registrations`,
    );
  }
  return agents;
}
