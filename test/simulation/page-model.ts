import type { UIMessageChunk } from 'ai';
import { tokensIn } from './stream-ledger.js';

/**
 * What a page shows of an assistant message, built from UI message chunks as AI SDK's UI
 * message reader builds it: one list of parts per step (`start-step`), text and reasoning by id
 * (deltas appended), tool inputs by call id; `reset-step` removes every part of the current step.
 * Written out again here, so the page is judged by what a user would see, not by the code that
 * made the chunks.
 */
export class PageModel {
  private readonly steps: Array<Map<string, string>> = [];

  apply(chunk: UIMessageChunk): void {
    switch (chunk.type) {
      case 'start-step':
        this.steps.push(new Map());
        return;
      case 'reset-step':
        if (this.steps.length > 0) this.steps[this.steps.length - 1] = new Map();
        return;
      case 'text-delta':
        return this.add(`text:${chunk.id}`, chunk.delta);
      case 'reasoning-delta':
        return this.add(`reasoning:${chunk.id}`, chunk.delta);
      case 'tool-input-delta':
        return this.add(`tool:${chunk.toolCallId}`, chunk.inputTextDelta);
      case 'tool-input-available':
        return this.add(`tool-input:${chunk.toolCallId}`, JSON.stringify(chunk.input));
      default:
        return;
    }
  }

  /** Every token the page shows, in order. */
  tokens(): string[] {
    return this.steps.flatMap((step) => [...step.values()].flatMap((text) => tokensIn(text)));
  }

  private add(id: string, text: string): void {
    // A page that resumes mid-step (with `from`) has that step already: its parts continue it.
    if (this.steps.length === 0) this.steps.push(new Map());
    const step = this.steps[this.steps.length - 1] as Map<string, string>;
    step.set(id, (step.get(id) ?? '') + text);
  }
}
