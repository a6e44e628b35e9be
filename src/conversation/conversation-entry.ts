import { createHash } from 'node:crypto';
import { canonicalJson } from '../json/canonical-json.js';

/**
 * One message of a run's conversation as the store keeps it. Entries are content-addressed: the
 * key is the hash of the parent's key and the message, so an entry is written once and never
 * rewritten, and every writer that means the same message after the same history (an activity's
 * retry, a workflow retry, a reset, a continue-as-new, the two branches of a reset) writes the
 * same row without coordinating with anyone.
 * @public
 */
export interface ConversationEntry {
  /** {@link conversationEntryKey} of `parent` and `json`. */
  readonly key: string;
  /** Key of the entry before this one, or the run's {@link conversationRoot} for its first message. */
  readonly parent: string;
  /** The message as canonical JSON (what the key hashes; parse it to get the message back). */
  readonly json: string;
}

const ROOT_DOMAIN = 'chamvi.conversation.root\n';
const ENTRY_DOMAIN = 'chamvi.conversation.entry\n';

/**
 * SHA-256, cut to 128 bits (22 base64url characters): collision-resistant enough for content
 * addressing within a store (a collision needs about 2^64 messages), and each key travels through
 * the event history several times a step, so its length is paid for in every run.
 */
function digest(text: string): string {
  return createHash('sha256').update(text).digest().subarray(0, 16).toString('base64url');
}

/**
 * The key a run's first message has as its parent: derived from the run id, so two runs with the
 * same prompt never share entries (and a run's entries can be pruned with it). No entry has this
 * key; the hashes are domain-separated, so no message can produce it.
 */
export function conversationRoot(runId: string): string {
  return digest(`${ROOT_DOMAIN}${runId}`);
}

/** The key of the entry holding `json` (a message's canonical JSON) after the entry `parent`. */
export function conversationEntryKey(parent: string, json: string): string {
  return digest(`${ENTRY_DOMAIN}${parent}\n${json}`);
}

/**
 * The entries that append `messages` to the conversation ending at `parent`, in order (each the
 * parent of the next). Messages are written as canonical JSON, so equal messages get equal keys
 * whatever their key order.
 *
 * @throws UnsupportedJsonValueError for a message JSON cannot represent (a BigInt, a cycle).
 */
export function chainEntries(parent: string, messages: readonly unknown[]): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  let previous = parent;
  for (const message of messages) {
    // Written as JSON would write it (what the messages went through in Temporal payloads before),
    // so a message part JSON writes lossily (a Uint8Array) does not stop the run.
    const json = canonicalJson(message, { faithful: false });
    const key = conversationEntryKey(previous, json);
    entries.push({ key, parent: previous, json });
    previous = key;
  }
  return entries;
}
