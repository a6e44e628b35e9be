// The chat example (examples/chat) in a real browser: headless Debian Chromium driven by
// playwright-core, against the example as `npm run example:chat` starts it (its own Temporal dev
// server, the SQLite store, the local GitHub-like tracker, a supervised worker process).
// CHAT_SCREENSHOT_DIR=docs/images writes the README's screenshots (else they go to a temp folder).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CHAT_REPO } from '../../examples/chat/chat-agent.js';
import { startChatExample, type ChatExample } from '../../examples/chat/chat-example.js';
import { launchChromium } from './chromium.js';

let example: ChatExample;
let browser: Browser;
let dir: string;
let shots: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chamvi-chat-page-'));
  shots = process.env['CHAT_SCREENSHOT_DIR'] ?? join(dir, 'screenshots');
  mkdirSync(shots, { recursive: true });
  // One after the other, so afterAll stops whatever did start.
  example = await startChatExample({ stateDir: dir, temporalAddress: null, tokenMs: 150 });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await example?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const assistantText = (page: Page) => page.getByTestId('assistant').innerText();
const occurrences = (text: string, part: string) => text.split(part).length - 1;

/** Waits until the assistant's text has `has` and lacks `lacks` (checked in the page, every animation frame). */
async function waitForText(page: Page, has: string, lacks?: string, timeout = 30_000): Promise<string> {
  await page
    .waitForFunction(
      ([has, lacks]) => {
        const text = document.querySelector('[data-testid=assistant]')?.textContent ?? '';
        return text.includes(has) && (lacks === undefined || !text.includes(lacks));
      },
      [has, lacks] as const,
      { timeout },
    )
    .catch(async (error: unknown) => {
      const shown = await assistantText(page).catch(() => '?');
      throw new Error(`no "${has}"${lacks ? ` without "${lacks}"` : ''} on the page; it shows: ${shown}`, {
        cause: error,
      });
    });
  return assistantText(page);
}

/** `promise`, or a failure saying `what` after `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

async function sendMessage(page: Page, message: string): Promise<void> {
  await page.goto(example.url);
  await page.fill('#message', message);
  await page.click('#send');
}

describe('the chat page (examples/chat) in headless Chromium', () => {
  it('streams the reply, posts the approved comment once, and finishes after its worker is SIGKILLed mid-stream and the page reloads', async () => {
    const page = await browser.newPage({ viewport: { width: 1180, height: 720 } });
    await sendMessage(page, 'Please answer issue #1.');

    // Text arrives while the model step streams: part of the first sentence, the run still running.
    await waitForText(page, 'Let me answer', 'approval first.');
    const workflowId = new URL(page.url()).searchParams.get('run') ?? '';
    expect(workflowId).toMatch(/^chat-/);
    const run = example.client.workflow.getHandle(workflowId);
    expect((await run.describe()).status.name).toBe('RUNNING');

    const approve = page.locator('button[data-action=approve]');
    await approve.waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(shots, 'chat-approval.png') });
    expect(example.comments(1)).toBe(0);
    await approve.click();
    // Executed, or reconciled if a loaded machine let the comment's heartbeat lapse: posted once either way.
    const posted =
      '[data-testid="tool-comment-1"][data-outcome="executed"], [data-testid="tool-comment-1"][data-outcome="reconciled"]';
    await page.locator(posted).waitFor({ timeout: 30_000 });
    expect(example.comments(1)).toBe(1);

    // The reply of step 1 is streaming: kill its worker in the middle of it.
    const partial = await waitForText(page, 'It carries a signed effect marker', 'finish the run.');
    await page.screenshot({ path: join(shots, 'chat-streaming.png') });
    const pid = example.worker.pid();
    expect(pid).toBeDefined();
    const next = example.worker.nextReady();
    process.kill(pid!, 'SIGKILL');
    const killedAt = Date.now();
    expect(partial).not.toContain('finish the run.');

    // The page re-attaches to the run from its URL and replays it from the durable state.
    await page.reload();
    expect(new URL(page.url()).searchParams.get('run')).toBe(workflowId);
    await within(next, 60_000, 'no new worker polled within 60 s of the kill');
    const restartMs = Date.now() - killedAt;
    await page.locator('#run-status[data-status="completed"]').waitFor({ timeout: 60_000 });
    const final = await waitForText(page, 'finish the run.');
    const recoveryMs = Date.now() - killedAt;
    if (process.env['CHAT_TIMINGS'])
      process.stdout.write(
        `chat page: kill to next worker polling ${restartMs} ms, to finished reply ${recoveryMs} ms\n`,
      );
    expect(occurrences(final, 'Let me answer issue #1.')).toBe(1);
    // The killed attempt's partial reply was replaced by the retry's, not appended to.
    expect(occurrences(final, 'The comment is on issue #1 now.')).toBe(1);
    await page.locator('[data-testid="issue-1-comments"]', { hasText: '1' }).waitFor();
    await page.locator('#worker-restarts', { hasText: '1' }).waitFor();
    expect(example.comments(1)).toBe(1);
    await page.locator('#effects tbody tr').first().waitFor();
    expect(await page.locator('#effects tbody').innerText()).toMatch(/comment\s+(executed|reconciled)\s+\d/);
    await page.locator('[data-testid=assistant]:not(.streaming)').waitFor();
    await page.screenshot({ path: join(shots, 'chat-finished.png') });

    // The kill did interrupt a step: an activity (the streaming model step) ran a second attempt.
    const history = await run.fetchHistory();
    const attempts = (history.events ?? []).map((e) => e.activityTaskStartedEventAttributes?.attempt ?? 0);
    expect(Math.max(...attempts)).toBeGreaterThanOrEqual(2);
    await page.close();
  }, 180_000);

  it('a worker SIGKILLed right after posting the comment, before recording it: the retry reconciles it, one comment', async () => {
    const issue = example.github.tracker.createIssue(CHAT_REPO.owner, CHAT_REPO.repo, {
      title: 'Widget list is slow with 10k widgets',
      login: 'carol',
    }).number;
    const page = await browser.newPage({ viewport: { width: 1180, height: 720 } });
    await sendMessage(page, `Please answer issue #${issue}.`);
    const approve = page.locator('button[data-action=approve]');
    await approve.waitFor({ timeout: 30_000 });
    await page.click('#crash-after-comment');
    await page.locator('#crash-after-comment[data-armed="true"]').waitFor();
    const next = example.worker.nextReady();
    await approve.click();
    await within(next, 60_000, 'no new worker polled within 60 s of the crash');
    await page.locator(`[data-testid="tool-comment-${issue}"][data-outcome="reconciled"]`).waitFor({ timeout: 60_000 });
    await page.locator('#run-status[data-status="completed"]').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId(`tool-comment-${issue}`).innerText()).toContain('2 attempts');
    expect(example.comments(issue)).toBe(1);
    await page.locator(`[data-testid="issue-${issue}-comments"]`, { hasText: '1' }).waitFor();
    await page.locator('[data-testid=assistant]:not(.streaming)').waitFor();
    await page.screenshot({ path: join(shots, 'chat-reconciled.png') });
    await page.close();
  }, 150_000);

  it('a run cancelled while it waits: the page shows it failed and stops reading its stream', async () => {
    const issue = example.github.tracker.createIssue(CHAT_REPO.owner, CHAT_REPO.repo, {
      title: 'Cancelled before the decision',
      login: 'carol',
    }).number;
    const page = await browser.newPage({ viewport: { width: 1180, height: 720 } });
    const streamReads: number[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/stream')) streamReads.push(Date.now());
    });
    await sendMessage(page, `Please answer issue #${issue}.`);
    await page.locator('button[data-action=approve]').waitFor({ timeout: 30_000 });
    const workflowId = new URL(page.url()).searchParams.get('run') ?? '';
    await example.client.workflow.getHandle(workflowId).cancel();
    await page.locator('#run-status[data-status="failed"]').waitFor({ timeout: 30_000 });
    // The stream ended with the run (its abort chunk): the page has no reason to read it again.
    await page.waitForTimeout(3000);
    const sinceEnd = streamReads.filter((at) => at > Date.now() - 3000);
    expect(sinceEnd).toEqual([]);
    await page.close();
  }, 120_000);

  it('a denied comment posts nothing: the call shows denied and the model says so', async () => {
    const issue = example.github.tracker.createIssue(CHAT_REPO.owner, CHAT_REPO.repo, {
      title: 'Dark mode for the widget editor',
      login: 'bob',
    }).number;
    const page = await browser.newPage({ viewport: { width: 1180, height: 720 } });
    await sendMessage(page, `Please answer issue #${issue}.`);
    const deny = page.locator('button[data-action=deny]');
    await deny.waitFor({ timeout: 30_000 });
    await deny.click();
    await page.locator(`[data-testid="tool-comment-${issue}"][data-outcome="denied"]`).waitFor({ timeout: 30_000 });
    await page.locator('#run-status[data-status="completed"]').waitFor({ timeout: 60_000 });
    await waitForText(page, `You denied the comment, so nothing was posted on issue #${issue}.`);
    expect(example.comments(issue)).toBe(0);
    await page.close();
  }, 120_000);
});
