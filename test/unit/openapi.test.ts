/**
 * The OpenAPI document against the app it describes: every route the hono app registers is in the
 * document with its method, every operation has a unique operationId and declares the answers any
 * request can get (421 for a foreign Host, 400 for a malformed path, 500 with a request id), and
 * the document names its server and license. (A response-by-response contract test and `redocly
 * lint` are still to come: issue 23, item 1.)
 */
import { describe, expect, it } from 'vitest';
import { MemoryJournal } from '../../src/index.js';
import { createServerApp } from '../../src/server.js';
import { ServerAuth } from '../../src/server/auth.js';
import { openApiDocument } from '../../src/server/openapi.js';

type Operation = { operationId?: string; responses: Record<string, unknown> };
const doc = openApiDocument() as { paths: Record<string, Record<string, Operation>>; servers?: unknown[]; info: { license?: { name: string } }; components: { schemas: Record<string, any> } };

describe('the OpenAPI document', () => {
  it('lists every route the app serves, with its method', () => {
    const host = { get: () => undefined, list: async () => [], stored: async () => undefined, create: async () => { throw new Error('unused'); }, open: async () => undefined, stop: async () => { throw new Error('unused'); }, shutdown: async () => undefined } as never;
    const server = createServerApp({ host, journal: new MemoryJournal(), auth: new ServerAuth('x'.repeat(32)), agents: [] });
    try {
      const served = server.app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([A-Za-z]+)/g, '{$1}')}`);
      const documented = Object.entries(doc.paths).flatMap(([route, ops]) => Object.keys(ops).map((m) => `${m} ${route}`));
      for (const route of served) expect(documented, route).toContain(route);
    } finally {
      server.close();
    }
  });

  it('gives every operation a unique operationId and the answers any request can get', () => {
    const ids = new Set<string>();
    for (const [route, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.operationId, `${method} ${route}`).toMatch(/^[a-z][A-Za-z0-9]+$/);
        expect(ids.has(op.operationId!), op.operationId).toBe(false);
        ids.add(op.operationId!);
        for (const code of ['400', '421', '500']) expect(Object.keys(op.responses), `${method} ${route}`).toContain(code);
      }
    }
    expect(doc.servers?.length).toBeGreaterThan(0);
    expect(doc.info.license?.name).toBe('MIT');
    expect(doc.components.schemas.Error.properties.outcome.type).toEqual(['object', 'null']);
  });
});
