/** The server's credentials: constant-time token checks, single-use expiring tickets, page cookies, loopback detection. */
import { describe, expect, it } from 'vitest';
import { constantTimeEqual, isLoopback, readCookie, ServerAuth, TICKET_TTL_MS } from '../../src/server/auth.js';

describe('ServerAuth', () => {
  const TOKEN = 'a-token-of-sufficient-length';

  it('accepts only the exact bearer token', () => {
    const auth = new ServerAuth(TOKEN);
    expect(auth.check({ authorization: `Bearer ${TOKEN}` })).toEqual({ ok: true, via: 'bearer' });
    expect(auth.check({ authorization: `bearer ${TOKEN}` }).ok).toBe(true);
    for (const wrong of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, 'Bearer ', `Basic ${TOKEN}`, TOKEN, '']) {
      expect(auth.check({ authorization: wrong }).ok, wrong).toBe(false);
    }
    expect(auth.check({}).ok).toBe(false);
    expect(() => new ServerAuth('short')).toThrow(/at least 16/);
  });

  it('a ticket works once, only before it expires, only for its session', () => {
    let now = 1000;
    const auth = new ServerAuth(TOKEN, () => now);
    const { ticket, expiresAt } = auth.issueTicket('s1');
    expect(expiresAt).toBe(1000 + TICKET_TTL_MS);
    expect(auth.redeemTicket(ticket, 's1')).toEqual({ ok: true, via: 'ticket' });
    expect(auth.redeemTicket(ticket, 's1').ok).toBe(false);
    const other = auth.issueTicket('s1').ticket;
    expect(auth.redeemTicket(other, 's2').ok).toBe(false);
    expect(auth.redeemTicket(other, 's1').ok).toBe(false); // spent by the failed attempt too
    const late = auth.issueTicket().ticket;
    now += TICKET_TTL_MS + 1;
    expect(auth.redeemTicket(late, 'any')).toEqual({ ok: false, reason: 'the ticket expired' });
  });

  it('a page cookie is a random value of its own (never the token) that expires', () => {
    let now = 0;
    const auth = new ServerAuth(TOKEN, () => now);
    const page = auth.openPage();
    expect(page).not.toContain(TOKEN);
    expect(auth.check({ cookie: `other=1; ase_page=${page}` })).toEqual({ ok: true, via: 'cookie' });
    expect(auth.check({ cookie: 'ase_page=forged' }).ok).toBe(false);
    now += 13 * 60 * 60 * 1000;
    expect(auth.check({ cookie: `ase_page=${page}` }).ok).toBe(false);
  });

  it('helpers', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
    expect(readCookie('a=1; b=2', 'b')).toBe('2');
    expect(readCookie(undefined, 'b')).toBeUndefined();
    for (const h of ['127.0.0.1', 'localhost', '::1', '[::1]', '127.1.2.3']) expect(isLoopback(h), h).toBe(true);
    for (const h of ['0.0.0.0', '192.168.1.2', '::', 'example.com']) expect(isLoopback(h), h).toBe(false);
  });
});
