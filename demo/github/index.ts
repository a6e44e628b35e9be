export { LocalGitHubServer, type LocalGitHubServerOptions } from './local-github-server.js';
export {
  IssueTracker,
  type GitHubComment,
  type GitHubIssue,
  type GitHubLabel,
  type GitHubUser,
} from './issue-tracker.js';
export { FaultPlan, type Fault, type GitHubOperation } from './faults.js';
export type { TokenLogins } from './auth.js';
