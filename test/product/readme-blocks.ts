/** The fenced blocks of `markdown` marked `<!-- file: <path> -->`, by path (a path may be shown more than once). */
export function markedBlocks(markdown: string): Map<string, string[]> {
  const blocks = new Map<string, string[]>();
  for (const m of markdown.matchAll(/<!-- file: (\S+) -->\n+```[a-z]*\n([\s\S]*?)\n```\n/g)) {
    const path = m[1] ?? '';
    blocks.set(path, [...(blocks.get(path) ?? []), m[2] ?? '']);
  }
  return blocks;
}
