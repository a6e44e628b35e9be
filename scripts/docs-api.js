// The API reference: API Documenter's Markdown of the doc models (one per entry point), made fit
// for VitePress: braces outside code escaped, and the entry points named as users import them.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';

export function renderApiReference(root, models, out) {
  rmSync(out, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [join(root, 'node_modules/@microsoft/api-documenter/bin/api-documenter'), 'markdown', '-i', models, '-o', out],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  for (const file of readdirSync(out)) {
    if (!file.endsWith('.md')) continue;
    const path = join(out, file);
    // Outside code blocks, braces are text: VitePress reads `{ … }` ending a paragraph as
    // attributes (markdown-it-attrs) and `{{ … }}` as a Vue interpolation.
    const text = readFileSync(path, 'utf8')
      .split(/(^```[\s\S]*?^```$)/m)
      .map((part, i) => (i % 2 === 1 ? part : part.replace(/\{/g, '&#123;').replace(/\}/g, '&#125;')))
      .join('')
      .replace(/@chamvi\/temporal-([a-z]+)/g, '@chamvi/temporal/$1')
      .replace(/^## temporal(?:-([a-z]+))? package$/m, (_, sub) => `## @chamvi/temporal${sub ? `/${sub}` : ''}`);
    writeFileSync(path, text);
  }
}
