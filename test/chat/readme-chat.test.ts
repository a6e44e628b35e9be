// README.md's chat code (Streaming, "A chat with useChat") is the chat example's files as they are:
// the routes, their handlers and the page with its useChat call, which `next build` type-checks in
// test/chat/chat-app.test.ts. A block that drifts from its file fails here.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { markedBlocks } from '../product/readme-blocks.js';
import { ROOT } from '../product/run-cli.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const SHOWN = [
  'examples/chat/lib/chat.ts',
  'examples/chat/app/api/chat/route.ts',
  'examples/chat/app/api/chat/[id]/stream/route.ts',
  'examples/chat/app/page.tsx',
  'examples/chat/app/chat.tsx',
];

describe("README.md's chat code", () => {
  it('shows the chat routes, their handlers and the useChat page once each, as the example has them', () => {
    const blocks = markedBlocks(readme);
    expect([...blocks.keys()].filter((path) => path.startsWith('examples/chat/'))).toEqual(SHOWN);
    for (const file of SHOWN) {
      expect({ file, blocks: blocks.get(file) }).toEqual({
        file,
        blocks: [readFileSync(join(ROOT, file), 'utf8').replace(/\n$/, '')],
      });
    }
  });

  it('shows them in the Streaming section, with the useChat call and its native approval flow', () => {
    const streaming = readme.slice(readme.indexOf('\n## Streaming\n'), readme.indexOf('\n## Example: chat app\n'));
    for (const file of SHOWN) expect(streaming).toContain(`<!-- file: ${file} -->`);
    for (const name of ['useChat', 'DefaultChatTransport', 'lastAssistantMessageIsCompleteWithApprovalResponses'])
      expect(streaming).toContain(name);
    expect(readFileSync(join(ROOT, 'examples/chat/app/chat.tsx'), 'utf8')).toContain('addToolApprovalResponse');
  });
});
