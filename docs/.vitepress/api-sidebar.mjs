import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath, URL } from 'node:url';

const API = fileURLToPath(new URL('../reference/api/', import.meta.url));

/** The entry points' pages that API Documenter wrote (one per package model), for the sidebar. */
export function apiSidebar() {
  if (!existsSync(API)) return [];
  return readdirSync(API)
    .filter((file) => /^[a-z-]+\.md$/.test(file) && file !== 'index.md')
    .sort()
    .map((file) => ({
      text: `@chamvi/${file.replace(/\.md$/, '').replace('-', '/')}`,
      link: `/reference/api/${file.replace(/\.md$/, '')}`,
    }));
}
