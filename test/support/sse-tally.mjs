#!/usr/bin/env node
// A Server-Sent Events reader in a process of its own, for the slow-clients memory probe: it reads
// an event stream as fast as its socket gives bytes and keeps none of them, only a tally (frames per
// event, entry frames at least `minEntryBytes` long, whether an entry containing `doneMarker` came).
//
// Why a separate process and no parsing: the probe's reader used to run in the test process, on the
// server's own event loop, decoding every frame to a string and keeping them all (≈74 MB), with a
// waitFor that rescanned every frame on each chunk. On a loaded 2-core machine it fell behind the
// fake session (which emits at loop speed) by over the server's 4 MiB cut-off and was cut like the
// stalled clients; its strings were also counted in the server's RSS. Here it costs the server only
// a socket.
//
// Usage: node sse-tally.mjs <url> <bearer token> <minEntryBytes> <doneMarker>
// Prints one JSON line when the stream ends or after the done entry:
//   {"status":200,"frames":{"entry":101,...},"bigEntries":100,"done":true,"bytes":...}
import http from 'node:http';

const [url, token, minEntryBytesText, doneMarker] = process.argv.slice(2);
if (!url || !token || !minEntryBytesText || !doneMarker) {
  process.stderr.write('usage: sse-tally.mjs <url> <token> <minEntryBytes> <doneMarker>\n');
  process.exit(2);
}
const minEntryBytes = Number(minEntryBytesText);
const marker = Buffer.from(doneMarker);
const SEPARATOR = Buffer.from('\n\n');
const ENTRY_HEAD = /^(?:id: \d+\n)?event: entry\n/;

const tally = { status: 0, frames: {}, bigEntries: 0, done: false, bytes: 0 };
let reported = false;
const report = () => {
  if (reported) return;
  reported = true;
  process.stdout.write(`${JSON.stringify(tally)}\n`);
};

const request = http.get(url, { headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } }, (response) => {
  tally.status = response.statusCode ?? 0;
  // The frame being read: its parts, its length, and its first bytes (enough for id and event lines).
  let parts = [];
  let length = 0;
  const finishFrame = () => {
    const frame = parts.length === 1 ? parts[0] : Buffer.concat(parts, length);
    parts = [];
    length = 0;
    const head = frame.subarray(0, 64).toString('latin1');
    const event = /(?:^|\n)event: ([^\n]*)/.exec(head)?.[1] ?? (head.startsWith(':') || head.startsWith('retry:') ? 'comment' : 'message');
    tally.frames[event] = (tally.frames[event] ?? 0) + 1;
    if (ENTRY_HEAD.test(head)) {
      if (frame.length >= minEntryBytes) tally.bigEntries++;
      if (frame.indexOf(marker) >= 0) {
        tally.done = true;
        report();
        response.destroy();
        process.exit(0);
      }
    }
  };
  let carry = 0; // 1 when the previous chunk ended in "\n" (a separator may straddle chunks)
  response.on('data', (chunk) => {
    tally.bytes += chunk.length;
    let from = 0;
    if (carry && chunk[0] === 0x0a) {
      // "\n" | "\n": the frame ended with the previous chunk (its trailing "\n" is already in parts).
      finishFrame();
      from = 1;
    }
    carry = 0;
    for (;;) {
      const at = chunk.indexOf(SEPARATOR, from);
      if (at < 0) break;
      parts.push(chunk.subarray(from, at));
      length += at - from;
      finishFrame();
      from = at + 2;
    }
    if (from < chunk.length) {
      parts.push(chunk.subarray(from));
      length += chunk.length - from;
      carry = chunk[chunk.length - 1] === 0x0a ? 1 : 0;
    }
  });
  response.on('end', report);
  response.on('error', report);
});
request.on('error', (error) => {
  tally.error = error.message;
  report();
});
process.on('exit', report);
