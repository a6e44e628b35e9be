import type { IncomingMessage } from 'node:http';

/** GitHub's page size limits: 30 items when `per_page` is absent, never more than 100. */
export const DEFAULT_PER_PAGE = 30;
export const MAX_PER_PAGE = 100;

/** One page of a list and the `Link` header that goes with it (absent when everything fits one page). */
export interface Page<T> {
  readonly items: T[];
  readonly link?: string;
}

/**
 * Slices `all` the way GitHub pages lists: `per_page` (default 30, clamped to 1..100) and `page`
 * (1-based, default 1) from the query. The `Link` header lists `prev`/`next`/`last`/`first` as
 * absolute URLs that keep every other query parameter, exactly in GitHub's form
 * `<url>; rel="next", <url>; rel="last"`, so `octokit.paginate` follows it.
 */
export function paginate<T>(req: IncomingMessage, url: URL, all: readonly T[]): Page<T> {
  const perPage = clamp(intParam(url, 'per_page') ?? DEFAULT_PER_PAGE, 1, MAX_PER_PAGE);
  const page = Math.max(1, intParam(url, 'page') ?? 1);
  const lastPage = Math.max(1, Math.ceil(all.length / perPage));
  const items = all.slice((page - 1) * perPage, page * perPage);
  if (lastPage === 1) return { items };
  const base = new URL(url.pathname + url.search, `http://${req.headers.host ?? '127.0.0.1'}`);
  const at = (n: number): string => {
    const u = new URL(base);
    u.searchParams.set('per_page', String(perPage));
    u.searchParams.set('page', String(n));
    return u.toString();
  };
  const rels: string[] = [];
  if (page > 1) rels.push(`<${at(Math.min(page - 1, lastPage))}>; rel="prev"`);
  if (page < lastPage) rels.push(`<${at(page + 1)}>; rel="next"`, `<${at(lastPage)}>; rel="last"`);
  if (page > 1) rels.push(`<${at(1)}>; rel="first"`);
  return { items, link: rels.join(', ') };
}

function intParam(url: URL, name: string): number | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null || !/^\d+$/.test(raw)) return undefined;
  return Number(raw);
}

function clamp(n: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, n));
}
