import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Absolute path of the workflow entry point (`workflows/index`) to bundle: the compiled `.js`
 * next to this file in the published package, or the `.ts` source when running from source.
 * @public
 */
export function chamviWorkflowsPath(): string {
  const js = fileURLToPath(new URL('../workflows/index.js', import.meta.url));
  if (existsSync(js)) return js;
  return fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
}
