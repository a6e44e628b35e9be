// Shared fixtures of the core tests: a scripted mock model, a small in-memory "remote" issue
// tracker that keeps comment bodies (with their markers), stores that fail on demand, and contexts.
import type { ModelMessage, ToolExecutionOptions } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import {
  findEffectMarkers,
  type EffectLogger,
  type EffectRecord,
  type EffectRecordInput,
  type IEffectStore,
  type ToolContext,
} from '../../src/index.js';
import { createToolContext, type ToolContextInit } from '../../src/context/tool-context.js';
import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import type { ClaimRequest, ClaimResult, ClaimToken, FencedResult } from '../../src/stores/effect-store.js';

export const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

export interface ScriptedCall {
  readonly toolName: string;
  readonly input: unknown;
  readonly id?: string;
}

/** One model step: tool calls, or a final text. */
export type ScriptedStep = { readonly calls: readonly ScriptedCall[] } | { readonly text: string };

let callSeq = 0;

/** The doGenerate result of one scripted step (the shape MockLanguageModelV4 expects). */
export function stepResult(step: ScriptedStep) {
  if ('text' in step) {
    return {
      content: [{ type: 'text' as const, text: step.text }],
      finishReason: { unified: 'stop' as const, raw: undefined },
      usage,
      warnings: [],
    };
  }
  return {
    content: step.calls.map((c) => ({
      type: 'tool-call' as const,
      toolCallId: c.id ?? `call-${++callSeq}`,
      toolName: c.toolName,
      input: JSON.stringify(c.input),
    })),
    finishReason: { unified: 'tool-calls' as const, raw: undefined },
    usage,
    warnings: [],
  };
}

/** A mock model that answers step i with script[i] (the last entry repeats). */
export function scriptedModel(script: readonly ScriptedStep[]): MockLanguageModelV4 {
  let i = 0;
  return new MockLanguageModelV4({
    doGenerate: async () => stepResult(script[Math.min(i++, script.length - 1)] as ScriptedStep),
  });
}

export interface RemoteComment {
  readonly id: number;
  readonly issue: number;
  readonly body: string;
  readonly author: string;
}

/** A tiny remote issue tracker: the "remote system" effects land in. */
export class FakeTracker {
  readonly comments: RemoteComment[] = [];
  posts = 0;

  post(issue: number, body: string, author = 'bot'): RemoteComment {
    this.posts++;
    const comment = { id: this.comments.length + 1, issue, body, author };
    this.comments.push(comment);
    return comment;
  }

  /** The comment on `issue` whose body carries exactly the marker of `key`, written by `author`. */
  findByMarker(issue: number, key: string, author = 'bot'): RemoteComment | undefined {
    return this.comments.find(
      (c) => c.issue === issue && c.author === author && findEffectMarkers(c.body).includes(key),
    );
  }
}

/** A MemoryEffectStore whose next `failWrites` record writes (put / complete) throw, like a store that went away. */
export class FlakyStore extends MemoryEffectStore {
  failWrites = 0;
  failReads = 0;

  override get(key: string): Promise<EffectRecord | undefined> {
    if (this.failReads > 0) {
      this.failReads--;
      return Promise.reject(new Error('store unreachable (read)'));
    }
    return super.get(key);
  }

  /** A claim reads the key too (it answers "recorded"), so it fails like a read. */
  override claim(key: string, request: ClaimRequest): Promise<ClaimResult> {
    if (this.failReads > 0) {
      this.failReads--;
      return Promise.reject(new Error('store unreachable (read)'));
    }
    return super.claim(key, request);
  }

  override put(key: string, record: EffectRecordInput): Promise<EffectRecord> {
    if (this.failWrites > 0) {
      this.failWrites--;
      return Promise.reject(new Error('store unreachable (write)'));
    }
    return super.put(key, record);
  }

  override complete(token: ClaimToken, record: EffectRecordInput): Promise<FencedResult> {
    if (this.failWrites > 0) {
      this.failWrites--;
      return Promise.reject(new Error('store unreachable (write)'));
    }
    return super.complete(token, record);
  }
}

/** The minimum IEffectStore anyone could write: get and put over a Map, no claims. */
export class PlainStore implements IEffectStore {
  readonly records = new Map<string, EffectRecord>();
  gets = 0;
  puts = 0;

  async get(key: string): Promise<EffectRecord | undefined> {
    this.gets++;
    return this.records.get(key);
  }

  async put(key: string, record: EffectRecordInput): Promise<EffectRecord> {
    this.puts++;
    const existing = this.records.get(key);
    if (existing) return existing;
    const stored: EffectRecord = { ...record, key, recordedAt: record.recordedAt ?? new Date().toISOString() };
    this.records.set(key, stored);
    return stored;
  }
}

/** A logger that keeps what it was told. */
export function captureLogger(): EffectLogger & { readonly messages: string[] } {
  const messages: string[] = [];
  return {
    messages,
    warn(message) {
      messages.push(message);
    },
  };
}

/** A finished record of key `k`, as a scripted store hands it back. */
export const RECORD_K: EffectRecord = {
  key: 'k',
  toolName: 't',
  result: 'posted',
  origin: 'executed',
  recordedAt: '2026-12-01T00:00:00.000Z',
};

export const silentLogger: EffectLogger = { warn: () => undefined };

export function makeCtx(runId = 'run-1', init: Partial<ToolContextInit> = {}): ToolContext {
  return createToolContext({ runId, agent: 'tester', ...init });
}

/** AI SDK call options as the tool loop passes them. */
export function callOptions(
  ctx: ToolContext,
  overrides: Partial<ToolExecutionOptions<ToolContext>> = {},
): ToolExecutionOptions<ToolContext> {
  return { toolCallId: `tc-${++callSeq}`, messages: [] as ModelMessage[], context: ctx, ...overrides };
}

/** Collects what a tool's execute produced: a plain value, or every value of an async iterable. */
export async function collect(produced: unknown): Promise<unknown[]> {
  if (typeof produced === 'object' && produced !== null && Symbol.asyncIterator in produced) {
    const out: unknown[] = [];
    for await (const v of produced as AsyncIterable<unknown>) out.push(v);
    return out;
  }
  return [await produced];
}

export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
