// @ts-check
/**
 * Watching a session's terminal from code: a read-only viewer of `GET /api/sessions/:id/terminal`
 * on the `ase serve` that runs on a data dir (found by its serve.json, token included). It prints
 * each status frame on stderr and the terminal's bytes on stdout: the first binary frame repaints
 * the current screen, then the live output follows. A viewer's keys are ignored by the server; the
 * desk (`ase attach ID`) is the one writer.
 *
 *   ase serve --data-dir D &                  # the server
 *   ase run --mode local --agent claude --data-dir D   # at a terminal: goes through it
 *   node examples/terminal-viewer.mjs D SESSION_ID     # in another terminal of the same size
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import WebSocket from 'ws';

const [dataDir, sessionId] = process.argv.slice(2);
if (!dataDir || !sessionId) {
  console.error('usage: node examples/terminal-viewer.mjs DATA_DIR SESSION_ID');
  process.exit(2);
}
const serve = JSON.parse(await readFile(path.join(dataDir, 'serve.json'), 'utf8'));
const token = (await readFile(serve.tokenFile, 'utf8')).trim();
const url = new URL(`/api/sessions/${encodeURIComponent(sessionId)}/terminal?role=viewer`, serve.url);
url.protocol = 'ws:';
const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
ws.on('unexpected-response', (_request, response) => {
  console.error(`refused: HTTP ${response.statusCode}`);
  process.exit(1);
});
ws.on('message', (data, isBinary) => {
  if (isBinary) process.stdout.write(/** @type {Buffer} */ (data));
  else console.error(`\n[${data.toString()}]`);
});
ws.on('close', (code, reason) => {
  console.error(`\n[closed ${code} ${reason.toString()}]`);
  process.exit(0);
});
