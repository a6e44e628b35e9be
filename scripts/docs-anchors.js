// Fails when a page of the built site links to an anchor that its target page does not have
// (VitePress checks that linked pages exist, not their anchors): every `href` to a page of the
// site with a `#fragment` must name an `id` of that page.
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import console from 'node:console';
import process from 'node:process';

const site = process.argv[2];
if (site === undefined) throw new Error('usage: node scripts/docs-anchors.js <built site folder>');

const pages = new Map(); // "/guides/chat" -> ids
const links = []; // { from, href }
for (const file of htmlFiles(site)) {
  const html = readFileSync(file, 'utf8');
  const page =
    '/' +
    relative(site, file)
      .split('\\')
      .join('/')
      .replace(/(index)?\.html$/, '');
  pages.set(page.replace(/\/$/, '') || '/', new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => decode(m[1]))));
  // The page's content only: VitePress's own navigation links (`#VPContent`, ...) are its business.
  const content = html.slice(html.indexOf('<main'), html.indexOf('</main>'));
  for (const m of content.matchAll(/\shref="([^"]*#[^"]*)"/g)) links.push({ from: page, href: decode(m[1]) });
}

const broken = [];
for (const { from, href } of links) {
  if (/^[a-z]+:/i.test(href)) continue;
  const [path, fragment] = href.split('#');
  if (fragment === '' || fragment === undefined) continue;
  const target = path === '' ? from : posix.resolve(posix.dirname(from.endsWith('/') ? from + 'x' : from), path);
  const ids = pages.get(target.replace(/\.html$/, '').replace(/\/$/, '') || '/');
  if (ids === undefined) broken.push(`${from}: ${href} (no such page)`);
  else if (!ids.has(fragment)) broken.push(`${from}: ${href} (the page has no #${fragment})`);
}
if (broken.length > 0) {
  console.error(`docs: ${broken.length} link(s) to a missing anchor:\n  ${broken.join('\n  ')}`);
  process.exit(1);
}
console.log(`docs: ${links.length} anchor link(s) on ${pages.size} pages, all found`);

function htmlFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? htmlFiles(join(dir, e.name)) : e.name.endsWith('.html') ? [join(dir, e.name)] : [],
  );
}

function decode(text) {
  return decodeURIComponent(
    text
      .replace(/&amp;/g, '&')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'"),
  );
}
