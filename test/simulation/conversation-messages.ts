import type { JsonMessage } from '../../common/index.js';
import { canonicalJson } from '../../src/json/canonical-json.js';

// The simulated model and tools. An answer is a function of the conversation the model saw and a
// variant (0 for the answer most attempts give; another for a non-deterministic model, or a reset
// branch that chose differently), so two executions that saw the same conversation write the same
// entries, as they do in production (one run id reused with the same prompt, a reset's branches).

/** What the model does in a step, drawn by its workflow. */
export interface AnswerShape {
  /** Tool calls the answer makes (0: a final answer). */
  readonly toolCalls: number;
  /** Ends with a tool message (errors for invalid calls): it stays pending with the workflow. */
  readonly trailingToolMessage: boolean;
}

/**
 * A short, stable hash of a JSON value (FNV-1a over its JSON; the simulator builds equal messages
 * with equal key order, so equal conversations hash alike).
 */
export function shortHash(value: unknown): string {
  const text = JSON.stringify(value);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(36);
}

export function promptMessage(prompt: string): JsonMessage {
  return { role: 'user', content: prompt };
}

/** The model's response messages for a step that saw `seen`. */
export function answerOf(seen: readonly JsonMessage[], variant: number, shape: AnswerShape): JsonMessage[] {
  const id = shortHash([seen, variant]);
  const calls = Array.from({ length: shape.toolCalls }, (_, i) => ({
    type: 'tool-call',
    toolCallId: `call-${id}-${i}`,
    toolName: 'lookup',
    input: { q: `${id}/${i}` },
  }));
  const assistant: JsonMessage = { role: 'assistant', content: [{ type: 'text', text: `answer ${id}` }, ...calls] };
  if (!shape.trailingToolMessage) return [assistant];
  const error = {
    type: 'tool-result',
    toolCallId: `invalid-${id}`,
    toolName: 'nonexistent',
    output: { type: 'error-text', value: 'Model tried to call unavailable tool' },
  };
  return [assistant, { role: 'tool', content: [error] }];
}

/** The tool calls of a step's answer (its assistant message). */
export function toolCallsOf(response: readonly JsonMessage[]): Array<{ toolCallId: string; toolName: string }> {
  const content = response[0]?.content;
  if (!Array.isArray(content)) return [];
  return (content as Array<{ type: string; toolCallId?: string; toolName?: string }>)
    .filter((p) => p.type === 'tool-call')
    .map((p) => ({ toolCallId: p.toolCallId ?? '', toolName: p.toolName ?? '' }));
}

/** The tools' results for `calls`, a function of the call and the variant (a reset branch's tools may answer anew). */
export function toolResultsOf(
  calls: ReadonlyArray<{ toolCallId: string; toolName: string }>,
  variant: number,
): Array<{ toolCallId: string; toolName: string; output: unknown }> {
  return calls.map((c) => ({ ...c, output: { type: 'json', value: { result: shortHash([c, variant]) } } }));
}

/**
 * The workflow's conversation after adding `results` (what `ConversationState.addToolResults`
 * does, written out again: the simulator's own account of the conversation, to compare with).
 */
export function withToolResults(
  full: readonly JsonMessage[],
  results: ReadonlyArray<{ toolCallId: string; toolName: string; output: unknown }>,
): JsonMessage[] {
  const parts = results.map((r) => ({ type: 'tool-result', ...r }));
  const last = full[full.length - 1];
  if (last !== undefined && last.role === 'tool' && Array.isArray(last.content)) {
    return [...full.slice(0, -1), { ...last, content: [...(last.content as unknown[]), ...parts] }];
  }
  return [...full, { role: 'tool', content: parts }];
}

/** Whether two JSON values are equal (key order does not matter). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) {
      return false;
    }
  }
  return true;
}

/** The first message where `got` differs from `want`, for a violation's message. */
export function firstDifference(got: readonly unknown[], want: readonly unknown[]): string {
  for (let i = 0; i < Math.max(got.length, want.length); i++) {
    const g = got[i] === undefined ? 'nothing' : canonicalJson(got[i], { faithful: false }).slice(0, 120);
    const w = want[i] === undefined ? 'nothing' : canonicalJson(want[i], { faithful: false }).slice(0, 120);
    if (g !== w) return `message ${i + 1} of ${got.length} is ${g}, written was ${w} (of ${want.length})`;
  }
  return 'no difference';
}
