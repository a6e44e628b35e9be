import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dropResponse, HttpError, readJson, sendJson } from '../../demo/github/http-io.js';
import { LocalHttpServer } from '../../demo/local-http-server.js';

/** A ticket the API creates: the effect the tests count. */
export interface Ticket {
  readonly id: number;
  readonly title: string;
  readonly priority: string;
}

interface KeyEntry {
  readonly fingerprint: string;
  state: 'in-progress' | 'done';
  status?: number;
  body?: unknown;
}

/** Options of {@link IdempotentTicketServer}. */
export interface IdempotentTicketServerOptions {
  /** How long creating a ticket takes, in ms (a second request with the key meanwhile gets 409). Default 0. */
  readonly processingMs?: number;
  /**
   * Check fencing tokens in this request header (e.g. `Chamvi-Fence`): per `Idempotency-Key` the
   * server remembers the highest fence it accepted, longer than its replays (see
   * {@link IdempotentTicketServer.expireIdempotencyKeys}), and answers 412 to a lower one before
   * looking at anything else. A request without the header is not fence-checked. Default: no check.
   */
  readonly fenceHeader?: string;
}

/**
 * A small HTTP API with Stripe-style `Idempotency-Key` semantics, for tests and demos:
 *
 * - `POST /tickets` (`{ title, priority? }`) needs an `Idempotency-Key` header (400 without).
 *   The first request with a key creates a ticket and answers 201 `{ id, title, priority }`.
 *   A repeat with the same key and the same request replays that answer with
 *   `Idempotent-Replayed: true` and creates nothing; a repeat while the first is still being
 *   processed gets 409; the same key with a different body or path gets 422.
 * - `GET /tickets` lists the tickets.
 *
 * - With `fenceHeader`, a request whose fence is lower than the highest one accepted for its key
 *   gets 412 and creates nothing (a zombie attempt's late request).
 *
 * Faults: {@link IdempotentTicketServer.dropNextResponse} creates the ticket and destroys the
 * socket before answering ("applied, response lost"); the key is remembered as done, so the
 * retry gets the replay. {@link IdempotentTicketServer.expireIdempotencyKeys} forgets every key,
 * as a real API does after its retention (Stripe: 24 hours), but keeps the fences.
 */
export class IdempotentTicketServer {
  /** Every ticket created; its length is the count of applied effects. */
  readonly tickets: Ticket[] = [];
  private readonly keys = new Map<string, KeyEntry>();
  private readonly processingMs: number;
  private readonly http = new LocalHttpServer('IdempotentTicketServer', (req, res) => this.handle(req, res));
  private readonly fences = new Map<string, number>();
  private readonly fenceHeader: string | undefined;
  private dropsPlanned = 0;
  /** `POST /tickets` requests received, whatever their answer. */
  posts = 0;
  /** Requests answered 200/201 as replays. */
  replays = 0;
  /** Requests answered 412 for a stale fence. */
  fenceRefusals = 0;

  constructor(options: IdempotentTicketServerOptions = {}) {
    this.processingMs = options.processingMs ?? 0;
    this.fenceHeader = options.fenceHeader?.toLowerCase();
  }

  /** Starts listening on a free port of 127.0.0.1. */
  async start(): Promise<this> {
    await this.http.start();
    return this;
  }

  /** Stops listening and closes open connections. */
  async stop(): Promise<void> {
    await this.http.stop();
  }

  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  get url(): string {
    return this.http.url;
  }

  /** The next `times` ticket creations are applied, then the socket is destroyed before the answer. */
  dropNextResponse(times = 1): void {
    this.dropsPlanned += times;
  }

  /**
   * Forgets every `Idempotency-Key` (a repeat is then a new request), as an API does once its key
   * retention has passed; the highest fence per key is kept.
   */
  expireIdempotencyKeys(): void {
    for (const [key, entry] of this.keys) if (entry.state === 'done') this.keys.delete(key);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://local');
      if (url.pathname === '/tickets' && req.method === 'GET') return sendJson(res, 200, this.tickets);
      if (url.pathname !== '/tickets' || req.method !== 'POST') throw new HttpError(404, 'Not Found');
      const key = req.headers['idempotency-key'];
      if (typeof key !== 'string' || key === '') throw new HttpError(400, 'Idempotency-Key header is required');
      this.posts += 1;
      this.checkFence(req, key);
      const body = await readJson(req);
      const fingerprint = createHash('sha256')
        .update(`${req.method} ${url.pathname}\n${JSON.stringify(body ?? null)}`)
        .digest('hex');
      const seen = this.keys.get(key);
      if (seen !== undefined) {
        if (seen.fingerprint !== fingerprint)
          throw new HttpError(422, 'This Idempotency-Key was already used with a different request.');
        if (seen.state === 'in-progress')
          throw new HttpError(409, 'A request with this Idempotency-Key is still being processed.');
        this.replays += 1;
        return sendJson(res, seen.status ?? 200, seen.body, { 'idempotent-replayed': 'true' });
      }
      const entry: KeyEntry = { fingerprint, state: 'in-progress' };
      this.keys.set(key, entry);
      try {
        const ticket = await this.createTicket(body);
        Object.assign(entry, { state: 'done', status: 201, body: ticket });
      } catch (error) {
        this.keys.delete(key);
        throw error;
      }
      if (this.dropsPlanned > 0) {
        this.dropsPlanned -= 1;
        return dropResponse(req, res);
      }
      sendJson(res, 201, entry.body);
    } catch (error) {
      if (error instanceof HttpError) sendJson(res, error.status, { error: error.message });
      else sendJson(res, 500, { error: error instanceof Error ? error.message : String(error) });
    }
  }

  /** Refuses a fence below the highest accepted for `key`; otherwise remembers it. */
  private checkFence(req: IncomingMessage, key: string): void {
    if (this.fenceHeader === undefined) return;
    const raw = req.headers[this.fenceHeader];
    if (raw === undefined) return;
    const fence = typeof raw === 'string' && /^[1-9][0-9]{0,15}$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(fence)) throw new HttpError(400, `${this.fenceHeader} must be a whole number from 1`);
    const highest = this.fences.get(key) ?? 0;
    if (fence < highest) {
      this.fenceRefusals += 1;
      throw new HttpError(412, `A request for this Idempotency-Key with fence ${highest} was already accepted.`);
    }
    this.fences.set(key, fence);
  }

  private async createTicket(body: unknown): Promise<Ticket> {
    const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    if (typeof fields.title !== 'string' || fields.title === '') throw new HttpError(400, 'title is required');
    if (this.processingMs > 0) await new Promise((r) => setTimeout(r, this.processingMs));
    const ticket: Ticket = {
      id: this.tickets.length + 1,
      title: fields.title,
      priority: typeof fields.priority === 'string' ? fields.priority : 'normal',
    };
    this.tickets.push(ticket);
    return ticket;
  }
}
