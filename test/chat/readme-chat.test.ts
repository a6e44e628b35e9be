// The chat guide's code (docs/guides/chat.md) is the chat example's files as they are:
// the routes, their handlers and the page with its useChat call, which `next build` type-checks in
// test/chat/chat-app.test.ts. A block that drifts from its file fails here.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { docPage } from '../docs/docs-pages.js';
import { markedBlocks } from '../product/readme-blocks.js';
import { ROOT } from '../product/run-cli.js';

const guide = docPage('guides/chat.md');
const SHOWN = [
  'examples/chat/lib/chat.ts',
  'examples/chat/app/api/chat/route.ts',
  'examples/chat/app/api/chat/[id]/stream/route.ts',
  'examples/chat/app/page.tsx',
  'examples/chat/app/chat.tsx',
];

describe("the chat guide's code", () => {
  it('shows the chat routes, their handlers and the useChat page once each, as the example has them', () => {
    const blocks = markedBlocks(guide);
    expect([...blocks.keys()].filter((path) => path.startsWith('examples/chat/'))).toEqual(SHOWN);
    for (const file of SHOWN) {
      expect({ file, blocks: blocks.get(file) }).toEqual({
        file,
        blocks: [readFileSync(join(ROOT, file), 'utf8').replace(/\n$/, '')],
      });
    }
  });

  it('shows them before the example app, with the useChat call and its native approval flow', () => {
    const streaming = guide.slice(guide.indexOf('\n## Streaming a run\n'), guide.indexOf('\n## The example app\n'));
    expect(streaming.length).toBeGreaterThan(1000);
    for (const file of SHOWN) expect(streaming).toContain(`<!-- file: ${file} -->`);
    for (const name of ['useChat', 'DefaultChatTransport', 'lastAssistantMessageIsCompleteWithApprovalResponses'])
      expect(streaming).toContain(name);
    expect(readFileSync(join(ROOT, 'examples/chat/app/chat.tsx'), 'utf8')).toContain('addToolApprovalResponse');
  });
});
