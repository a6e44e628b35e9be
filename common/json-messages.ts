// Conversation shapes as they cross between workflow and activities. Workflow code runs in
// Temporal's sandbox and must not import `ai`, so the AI SDK's messages are typed structurally.

/** An AI SDK `ModelMessage`, as JSON. @public */
export interface JsonMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: unknown;
  readonly [extra: string]: unknown;
}

/** An AI SDK `ToolResultOutput` (what the model sees of a tool result), as JSON. @public */
export type JsonToolOutput =
  | { readonly type: 'text' | 'error-text'; readonly value: string }
  | { readonly type: 'json' | 'error-json'; readonly value: unknown }
  | { readonly type: string; readonly value?: unknown; readonly [extra: string]: unknown };
