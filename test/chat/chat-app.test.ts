// The chat example (examples/chat, a Next.js App Router app with useChat over chatRoute) in a real
// browser: `next build` once, then headless Debian Chromium driven by playwright-core against the
// example as `npm run example:chat` starts it (its own Temporal dev server, the SQLite store, the
// local GitHub-like tracker, a supervised worker process, `next start`). Effects are counted on the
// tracker. CHAT_SCREENSHOT_DIR=docs/images writes the chat guide's screenshots (docs/guides/chat.md) (else a temp folder).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Browser, Page } from 'playwright-core';
import { CHAT_REPO } from '../../examples/chat/dev/chat-agent.js';
import { libraryBuildStale } from '../../examples/chat/dev/chat-app.js';
import { startChatExample, type ChatExample } from '../../examples/chat/dev/chat-example.js';
import { launchChromium } from './chromium.js';

let example: ChatExample;
let browser: Browser;
let dir: string;
let shots: string;
const timings: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chamvi-chat-app-'));
  shots = process.env['CHAT_SCREENSHOT_DIR'] ?? join(dir, 'screenshots');
  mkdirSync(shots, { recursive: true });
  // The app imports the built package (dist/), as a user's app imports the installed one.
  if (libraryBuildStale()) {
    const build = spawnSync('npm', ['run', 'build'], { encoding: 'utf8', timeout: 300_000 });
    if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);
  }
  // One after the other, so afterAll stops whatever did start.
  const t0 = Date.now();
  const onProgress = (line: string) => timings.push(`${line} at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  example = await startChatExample({ stateDir: dir, temporalAddress: null, tokenMs: 150, build: true, onProgress });
  timings.push(`started at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  timings.push(`next build ${((example.buildMs ?? 0) / 1000).toFixed(1)} s`);
  browser = await launchChromium();
  for (const title of ['Widget list is slow with 10k widgets', 'Dark mode for the widget editor']) {
    example.github.tracker.createIssue(CHAT_REPO.owner, CHAT_REPO.repo, { title, login: 'carol' });
  }
}, 420_000);

afterAll(async () => {
  process.stdout.write(`chat app: ${timings.join('; ')}\n`);
  await browser?.close();
  await example?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const occurrences = (text: string, part: string) => text.split(part).length - 1;
const lastReply = (page: Page) => page.getByTestId('assistant').last().innerText();
const tool = (page: Page) => page.locator('[data-testid=tool-comment]').last();

/** Waits until the last assistant message has `has` and lacks `lacks` (checked in the page, every animation frame). */
async function waitForReply(page: Page, has: string, lacks?: string, timeout = 30_000): Promise<string> {
  await page
    .waitForFunction(
      ([has, lacks]) => {
        const replies = document.querySelectorAll('[data-testid=assistant]');
        const text = replies[replies.length - 1]?.textContent ?? '';
        return text.includes(has) && (lacks === undefined || !text.includes(lacks));
      },
      [has, lacks] as const,
      { timeout, polling: 'raf' },
    )
    .catch(async (error: unknown) => {
      const shown = await lastReply(page).catch(() => '?');
      throw new Error(`no "${has}"${lacks ? ` without "${lacks}"` : ''} in the last reply; it shows: ${shown}`, {
        cause: error,
      });
    });
  return lastReply(page);
}

/** Types `message` and clicks Send; resolves with the time of the click. */
async function send(page: Page, message: string): Promise<number> {
  await page.fill('#message', message);
  const sentAt = Date.now();
  await page.click('#send');
  return sentAt;
}

/** Waits until useChat's status is back to `ready` (the turn's stream ended). */
const ready = (page: Page, timeout = 60_000) => page.locator('main[data-status=ready]').waitFor({ timeout });

describe('the chat app (examples/chat: Next.js, useChat, chatRoute) in headless Chromium', () => {
  it('streams, approves with the native control, resumes after reloads, answers from the first turn, denies, and survives a SIGKILLed worker', async () => {
    const page = await browser.newPage({ viewport: { width: 1180, height: 760 } });
    await page.goto(example.url);
    const chatId = new URL(page.url()).searchParams.get('chat') ?? '';
    expect(chatId).toMatch(/^chat-/);

    // Turn 1: text streams while the model step runs.
    const sentAt = await send(page, 'Please answer issue #1.');
    await page.getByTestId('assistant').last().getByText('Let me').waitFor({ timeout: 30_000 });
    timings.push(`Send to first token ${Date.now() - sentAt} ms`);
    await waitForReply(page, 'Let me answer', 'approval first.');
    const turn1 = example.client.workflow.getHandle(`${chatId}:1`);
    expect((await turn1.describe()).status.name).toBe('RUNNING');

    // A reload mid-stream: the page opens the chat from the store and resumes the turn's stream.
    await page.reload();
    await expect(page.getByTestId('user').first().innerText()).resolves.toBe('Please answer issue #1.');
    await tool(page).and(page.locator('[data-state=approval-requested]')).waitFor({ timeout: 30_000 });
    await waitForReply(page, 'it waits for your approval first.');
    // A reload while the call waits: approval-requested again, from the durable request.
    await page.reload();
    const approve = tool(page).locator('button[data-action=approve]');
    await approve.waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(shots, 'chat-approval.png') });
    expect(example.comments(1)).toBe(0);

    // Approve with the native control: the answer goes with useChat's next request, the route decides it.
    await approve.click();
    await tool(page).and(page.locator('[data-state=output-available]')).waitFor({ timeout: 30_000 });
    // The effect report on the part's result metadata. Executed, or reconciled if a loaded machine
    // let the comment's heartbeat lapse: posted once either way.
    await tool(page).and(page.locator('[data-outcome=executed], [data-outcome=reconciled]')).waitFor();
    expect(example.comments(1)).toBe(1);

    // The reply after the comment streams: SIGKILL its worker in the middle of it.
    const partial = await waitForReply(page, 'It carries a signed effect marker', 'finish the run.');
    await page.screenshot({ path: join(shots, 'chat-streaming.png') });
    const pid = example.worker.pid();
    expect(pid).toBeDefined();
    process.kill(pid!, 'SIGKILL');
    const killedAt = Date.now();
    expect(partial).not.toContain('finish the run.');
    const final = await waitForReply(page, 'finish the run.', undefined, 60_000);
    timings.push(`kill to finished reply ${Date.now() - killedAt} ms`);
    await ready(page);
    expect(occurrences(final, 'Let me answer issue #1.')).toBe(1);
    // The killed attempt's partial reply was replaced by the retry's, not appended to.
    expect(occurrences(final, 'The comment is on issue #1 now.')).toBe(1);
    expect(example.comments(1)).toBe(1);
    await page.getByTestId('issue-1-comments').getByText('1', { exact: true }).waitFor();
    // The kill did interrupt a step: an activity (the streaming model step) ran a second attempt.
    const attempts = ((await turn1.fetchHistory()).events ?? []).map(
      (e) => e.activityTaskStartedEventAttributes?.attempt ?? 0,
    );
    expect(Math.max(...attempts)).toBeGreaterThanOrEqual(2);

    // Turn 2 answers from turn 1: the comment's id is only in turn 1's tool result (the stored conversation).
    const [comment] = example.github.tracker.listComments(CHAT_REPO.owner, CHAT_REPO.repo, 1) ?? [];
    await send(page, 'What did you post so far?');
    await waitForReply(page, `Earlier in this chat I posted one comment: comment ${comment?.id} on issue #1.`);
    await ready(page);

    // Turn 3: deny. The part ends output-denied, nothing is posted, and the model is told.
    await send(page, 'Please answer issue #3.');
    const deny = tool(page).locator('button[data-action=deny]');
    await deny.waitFor({ timeout: 30_000 });
    await deny.click();
    await tool(page).and(page.locator('[data-state=output-denied]')).waitFor({ timeout: 30_000 });
    await waitForReply(page, 'You denied the comment, so nothing was posted on issue #3.');
    await ready(page);
    expect(example.comments(3)).toBe(0);

    // A reload after the three turns shows them from the store, every tool part in its final state.
    await page.reload();
    await page.getByTestId('assistant').nth(2).waitFor();
    expect(await page.getByTestId('user').allInnerTexts()).toEqual([
      'Please answer issue #1.',
      'What did you post so far?',
      'Please answer issue #3.',
    ]);
    const parts = page.locator('[data-testid=tool-comment]');
    expect(await parts.evaluateAll((all) => all.map((e) => [e.dataset['state'], e.dataset['outcome']]))).toEqual([
      ['output-available', expect.stringMatching(/^(executed|reconciled)$/)],
      ['output-denied', 'denied'],
    ]);
    expect(occurrences(await page.locator('main').innerText(), 'The comment is on issue #1 now.')).toBe(1);
    await page.screenshot({ path: join(shots, 'chat-finished.png'), fullPage: true });
    await page.close();
  }, 240_000);

  it('a worker SIGKILLed right after posting the comment, before recording it: the retry reconciles it, one comment', async () => {
    const issue = example.github.tracker.createIssue(CHAT_REPO.owner, CHAT_REPO.repo, {
      title: 'Export widgets as CSV',
      login: 'dave',
    }).number;
    const page = await browser.newPage({ viewport: { width: 1180, height: 760 } });
    await page.goto(example.url);
    await send(page, `Please answer issue #${issue}.`);
    const approve = tool(page).locator('button[data-action=approve]');
    await approve.waitFor({ timeout: 30_000 });
    example.worker.crashAfterNextComment();
    await approve.click();
    await tool(page).and(page.locator('[data-outcome=reconciled]')).waitFor({ timeout: 60_000 });
    expect(await tool(page).innerText()).toContain('reconciled after 2 attempts');
    await ready(page);
    expect(example.comments(issue)).toBe(1);
    await page.screenshot({ path: join(shots, 'chat-reconciled.png') });
    await page.close();
  }, 150_000);
});

/** One request with exactly these headers (node:http sends Host and Origin as given). */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; body: string }> {
  const port = Number(new URL(example.url).port);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, setHost: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the chat app answers its own page only (its proxy: examples/chat/lib/same-origin-guard.ts)', () => {
  const turn = (id: string) =>
    JSON.stringify({
      id,
      messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Please answer issue #1.' }] }],
    });
  const started = (id: string) =>
    example.client.workflow
      .getHandle(`${id}:1`)
      .describe()
      .then(
        () => true,
        (error: unknown) => {
          if (error instanceof WorkflowNotFoundError) return false;
          throw error;
        },
      );
  const own = () => {
    const host = new URL(example.url).host;
    return { host, origin: `http://${host}` };
  };

  it('refuses another site, a DNS-rebound Host, a text/plain body and a POST without Origin, and starts nothing', async () => {
    const { host } = own();
    const refused: Array<{ headers: Record<string, string>; status: number }> = [
      { headers: { host, origin: 'http://evil.example', 'content-type': 'text/plain' }, status: 403 },
      { headers: { host, origin: 'http://evil.example', 'content-type': 'application/json' }, status: 403 },
      {
        headers: { host: 'evil.example', origin: 'http://evil.example', 'content-type': 'application/json' },
        status: 403,
      },
      { headers: { ...own(), 'content-type': 'text/plain' }, status: 415 },
      { headers: { host, 'content-type': 'application/json' }, status: 403 },
      { headers: { ...own(), 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' }, status: 403 },
    ];
    for (const [i, { headers, status }] of refused.entries()) {
      const id = `chat-refused-${i}-${Date.now()}`;
      const answer = await raw('POST', '/api/chat', headers, turn(id));
      expect({ i, status: answer.status, body: answer.body }).toEqual({
        i,
        status,
        body: expect.stringContaining('refused'),
      });
      expect(await started(id)).toBe(false);
    }
    expect((await raw('GET', '/', { host: 'evil.example' })).status).toBe(403);
  }, 60_000);

  it('answers its own page: a same-origin JSON POST starts the turn, and a GET needs no Origin', async () => {
    const id = `chat-own-${Date.now()}`;
    const answer = await raw('POST', '/api/chat', { ...own(), 'content-type': 'application/json' }, turn(id));
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('"type":"start"');
    expect(await started(id)).toBe(true);
    await example.client.workflow.getHandle(`${id}:1`).terminate('test over');
    expect((await raw('GET', '/api/tracker', { host: own().host, 'sec-fetch-site': 'same-origin' })).status).toBe(200);
  }, 60_000);
});
