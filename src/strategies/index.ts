// `@chamvi/temporal/strategies`: the reconciliation strategies (signed markers, git trailers with a
// compare-and-swap push, Idempotency-Key requests, JetStream message ids, set semantics) and the
// errors they throw. Loaded on use: the git strategy is what loads `child_process`.
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
export { runGit, runGitRaw, type GitOptions, type GitOutput } from './git-exec.js';
export {
  EFFECT_TRAILER,
  assertTrailerKey,
  checkRemoteEffect,
  commitTreeWithEffect,
  commitWithEffectTrailer,
  effectTrailersOf,
  pushEffectCommit,
  pushWithLease,
  remoteHead,
  withEffectTrailer,
  type EffectPushResult,
  type LeasePushResult,
  type RemoteBranch,
  type RemoteEffectState,
} from './git-remote-state.js';
export { IDEMPOTENCY_KEY_HEADER, idempotentFetch, type IdempotentFetchOptions } from './idempotent-fetch.js';
export { publishOnce, type JetStreamPublisher, type PublishOnceResult } from './jetstream-publish.js';
export { defineSetEffectTool } from './set-semantics.js';
export { effectOutcomeUnknown, reconcileRemote, verdict, type RemoteVerdict } from './outcome-unknown.js';
export {
  EffectFenceRefusedError,
  GitCommandError,
  IdempotencyKeyInProgressError,
  IdempotencyKeyReusedError,
  IdempotentRequestError,
  RemoteRefContendedError,
} from '../errors/errors.js';
