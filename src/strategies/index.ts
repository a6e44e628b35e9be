// `@chamvi/temporal/strategies`: the reconciliation strategies, the ways `alreadyApplied` (or the
// remote itself) tells that an effect is already there: signed markers, git trailers with a
// compare-and-swap push, Idempotency-Key requests, JetStream message ids, set semantics, and
// three-valued remote checks. Loaded on use: the git strategy is what loads `child_process`.
export {
  signedEffectMarker,
  findSignedEffectMarkers,
  neutralizeEffectMarkers,
  type MarkerSecret,
} from './signed-marker.js';
export {
  markerApplied,
  markerAppliedInPages,
  type MarkedComment,
  type MarkerQuery,
  type MarkerTrust,
} from './marker-applied.js';
export { runGit, type GitOptions } from './git-exec.js';
export {
  EFFECT_TRAILER,
  checkRemoteEffect,
  commitTreeWithEffect,
  commitWithEffectTrailer,
  pushEffectCommit,
  pushWithLease,
  type EffectPushResult,
  type LeasePushResult,
  type RemoteBranch,
  type RemoteEffectState,
} from './git-remote-state.js';
export { revertEffectCommit, type EffectRevertResult } from './git-revert.js';
export { idempotentFetch, type IdempotentFetchOptions } from './idempotent-fetch.js';
export { publishOnce, type JetStreamPublisher, type PublishOnceResult } from './jetstream-publish.js';
export { defineSetEffectTool } from './set-semantics.js';
export { reconcileRemote, verdict, type RemoteVerdict } from './outcome-unknown.js';

// Types of the root entry point that `defineSetEffectTool` takes and returns, re-exported as types
// (the same declarations).
export type { EffectTool, EffectToolDefinition, EffectToolHooks } from '../effects/define-effect-tool.js';
export type { EffectCallInfo, RunData, RunInfo, ToolContext } from '../context/tool-context.js';
