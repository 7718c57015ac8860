/**
 * Who may talk to `ase serve`: every request carries the server's token (`Authorization: Bearer`),
 * a page cookie obtained with it, or, for an EventSource (which cannot set headers), a short-lived
 * single-use ticket obtained with an authenticated POST. Comparisons are constant-time; tickets and
 * page cookies are random values kept only in this process.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const COOKIE_NAME = 'ase_page';
/** A ticket opens one event stream within this time. */
export const TICKET_TTL_MS = 30_000;
/** A page cookie lasts this long (the token opens a new one). */
export const PAGE_TTL_MS = 12 * 60 * 60 * 1000;

export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Equal strings, in time that does not depend on where they differ (digests have equal length). */
export function constantTimeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db) && a.length === b.length;
}

/** How a request proved itself, or why it did not. */
export type AuthResult = { ok: true; via: 'bearer' | 'cookie' | 'ticket' } | { ok: false; reason: string };

export class ServerAuth {
  readonly #token: string;
  readonly #tickets = new Map<string, { expiresAt: number; sessionId?: string }>();
  readonly #pages = new Map<string, number>();
  readonly #now: () => number;

  constructor(token: string, now: () => number = Date.now) {
    if (token.length < 16) throw new Error('the server token must be at least 16 characters');
    this.#token = token;
    this.#now = now;
  }

  checkToken(candidate: string | undefined): boolean {
    return candidate !== undefined && constantTimeEqual(candidate, this.#token);
  }

  /** `Authorization: Bearer <token>` or the page cookie. */
  check(headers: { authorization?: string | undefined; cookie?: string | undefined }): AuthResult {
    const auth = headers.authorization;
    if (auth !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
      if (!match) return { ok: false, reason: 'Authorization must be "Bearer <token>"' };
      return this.checkToken(match[1]) ? { ok: true, via: 'bearer' } : { ok: false, reason: 'wrong token' };
    }
    const page = readCookie(headers.cookie, COOKIE_NAME);
    if (page !== undefined) return this.#checkPage(page) ? { ok: true, via: 'cookie' } : { ok: false, reason: 'the page cookie expired or is unknown' };
    return { ok: false, reason: 'no token: send "Authorization: Bearer <token>"' };
  }

  /** A new single-use ticket, for one event stream (of `sessionId`, when given). */
  issueTicket(sessionId?: string): { ticket: string; expiresAt: number } {
    this.#sweep();
    const ticket = randomBytes(24).toString('base64url');
    const expiresAt = this.#now() + TICKET_TTL_MS;
    this.#tickets.set(ticket, { expiresAt, ...(sessionId !== undefined && { sessionId }) });
    return { ticket, expiresAt };
  }

  /** Spends a ticket: valid once, before it expires, for its session. */
  redeemTicket(ticket: string, sessionId: string): AuthResult {
    // Looked up by value: the map's hashing does not leak timing usefully for 192 random bits.
    const found = this.#tickets.get(ticket);
    if (!found) return { ok: false, reason: 'unknown or already used ticket' };
    this.#tickets.delete(ticket);
    if (found.expiresAt < this.#now()) return { ok: false, reason: 'the ticket expired' };
    if (found.sessionId !== undefined && found.sessionId !== sessionId) return { ok: false, reason: 'the ticket is for another session' };
    return { ok: true, via: 'ticket' };
  }

  /** A new page cookie value (after the token was shown). */
  openPage(): string {
    this.#sweep();
    const value = randomBytes(32).toString('base64url');
    this.#pages.set(value, this.#now() + PAGE_TTL_MS);
    return value;
  }

  #checkPage(value: string): boolean {
    const expiresAt = this.#pages.get(value);
    if (expiresAt === undefined) return false;
    if (expiresAt < this.#now()) {
      this.#pages.delete(value);
      return false;
    }
    return true;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [k, v] of this.#tickets) if (v.expiresAt < now) this.#tickets.delete(k);
    for (const [k, v] of this.#pages) if (v < now) this.#pages.delete(k);
  }
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Loopback addresses: the only ones `ase serve` binds without a token file. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}
