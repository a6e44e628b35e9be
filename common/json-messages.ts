// Conversation shapes as they cross between workflow and activities. Workflow code runs in
// Temporal's sandbox and must not import `ai`, so the AI SDK's messages are typed structurally.

/** An AI SDK `ModelMessage`, as JSON. @public */
export interface JsonMessage {
  /** Who speaks, as in the AI SDK's `ModelMessage`. */
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  /** The content: a string or the AI SDK's parts, as JSON. */
  readonly content: unknown;
  /** Other fields of the AI SDK's message (`providerOptions`), kept as they are. */
  readonly [extra: string]: unknown;
}

/** An AI SDK `ToolResultOutput` (what the model sees of a tool result), as JSON. @public */
export type JsonToolOutput =
  | { readonly type: 'text' | 'error-text'; readonly value: string }
  | { readonly type: 'json' | 'error-json'; readonly value: unknown }
  | { readonly type: string; readonly value?: unknown; readonly [extra: string]: unknown };
