import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-io.js';

/** Maps API tokens to user logins: `{ 'bot-token': 'chamvi-bot' }`. */
export type TokenLogins = Readonly<Record<string, string>>;

/**
 * The login the request authenticates as. Accepts `Authorization: token X` and `Bearer X` (both
 * forms Octokit and GitHub use); a missing or unknown token is a 401 `Bad credentials`, as on GitHub.
 */
export function authenticate(req: IncomingMessage, tokens: TokenLogins): string {
  const header = req.headers.authorization ?? '';
  const match = /^(?:token|bearer)\s+(\S+)$/i.exec(header.trim());
  const token = match?.[1];
  if (token === undefined || !Object.hasOwn(tokens, token)) throw new HttpError(401, 'Bad credentials');
  return tokens[token] as string;
}
