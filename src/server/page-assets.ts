/**
 * The page's scripts, served by the server itself at `GET /assets/<name>` (no CDN: the page works
 * offline and its CSP stays `script-src 'nonce-…'`, each script tag carrying the nonce). Vendor
 * libraries come from node_modules, resolved through their package exports and read once; the
 * page's own scripts are the strings in page/. xterm.js's stylesheet is inlined into the page instead
 * (pageVendorCss), so the CSP needs no style files. Authenticated like the page (the page cookie or the
 * bearer token); an ETag lets the browser revalidate instead of downloading again.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Hono } from 'hono';
import type { ServerAuth } from './auth.js';
import { AseError } from '../errors.js';
import { PAGE_SCRIPT } from './page/app-script.js';
import { MARKDOWN_SCRIPT } from './page/markdown.js';
import { TERMINAL_PANEL_SCRIPT } from './page/terminal-panel.js';
import { TOOL_VIEW_SCRIPT } from './page/tool-view.js';

const require = createRequire(import.meta.url);

interface Asset {
  type: string;
  /** Read on first use (a vendor file), then kept. */
  load: () => string;
}

/** A file of an installed package, by its exported subpath (e.g. `markdown-it/browser`), without its source-map comment. */
function fromPackage(specifier: string): () => string {
  return () => readFileSync(require.resolve(specifier), 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
}

const ASSETS: Record<string, Asset> = {
  // markdown-it's self-contained UMD build (defines window.markdownit).
  'markdown-it.js': { type: 'text/javascript; charset=utf-8', load: fromPackage('markdown-it/browser') },
  'markdown.js': { type: 'text/javascript; charset=utf-8', load: () => MARKDOWN_SCRIPT },
  'tool-view.js': { type: 'text/javascript; charset=utf-8', load: () => TOOL_VIEW_SCRIPT },
  // xterm.js's UMD build (defines window.Terminal): the terminal panel.
  'xterm.js': { type: 'text/javascript; charset=utf-8', load: fromPackage('@xterm/xterm/lib/xterm.js') },
  'terminal-panel.js': { type: 'text/javascript; charset=utf-8', load: () => TERMINAL_PANEL_SCRIPT },
  'page.js': { type: 'text/javascript; charset=utf-8', load: () => PAGE_SCRIPT },
};

/** The scripts the page loads, in order (each needs the ones before it). */
export const PAGE_SCRIPTS: readonly string[] = ['markdown-it.js', 'markdown.js', 'tool-view.js', 'xterm.js', 'terminal-panel.js', 'page.js'];

let vendorCss: string | undefined;
/** Vendor stylesheets, inlined into the page's <style> (its CSP allows inline styles, not style files): xterm.js's. */
export function pageVendorCss(): string {
  vendorCss ??= fromPackage('@xterm/xterm/css/xterm.css')();
  return vendorCss;
}

const loaded = new Map<string, { body: string; etag: string }>();

function assetBody(name: string): { body: string; etag: string } | undefined {
  const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
  if (!asset) return undefined;
  let done = loaded.get(name);
  if (!done) {
    const body = asset.load();
    done = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
    loaded.set(name, done);
  }
  return done;
}

/** `GET /assets/:name` on `app`. */
export function mountPageAssets(app: Hono, auth: ServerAuth): void {
  app.get('/assets/:name', (c) => {
    const result = auth.check({ authorization: c.req.header('authorization'), cookie: c.req.header('cookie') });
    if (!result.ok) throw new AseError('UNAUTHORIZED', result.reason);
    const name = c.req.param('name');
    const asset = assetBody(name);
    if (!asset) throw new AseError('NOT_FOUND', `no asset ${JSON.stringify(name.slice(0, 80))}`);
    c.header('ETag', asset.etag);
    c.header('Cache-Control', 'private, no-cache');
    if (c.req.header('if-none-match') === asset.etag) return c.body(null, 304);
    c.header('Content-Type', ASSETS[name]!.type);
    return c.body(asset.body);
  });
}
