#!/usr/bin/env node
// A Server-Sent Events reader in a process of its own, for the slow-clients memory probe: it reads
// an event stream as fast as its socket gives bytes and keeps none of them, only a tally (frames per
// event, entry frames at least `minEntryBytes` long, entries seen twice, whether an entry containing
// `doneMarker` came).
//
// Why a separate process and no parsing: the probe's reader used to run in the test process, on the
// server's own event loop, decoding every frame to a string and keeping them all (≈74 MB), with a
// waitFor that rescanned every frame on each chunk. On a loaded 2-core machine it fell behind the
// fake session (which emits at loop speed) by over the server's 4 MiB cut-off and was cut like the
// stalled clients; its strings were also counted in the server's RSS. Here it costs the server only
// a socket.
//
// Cut off, it comes back with Last-Event-ID as EventSource does (the server promises nothing
// durable is lost): at load 95 on 2 cores even this process fell over 4 MiB behind the fake session
// and was cut once (the session does not wait for its clients, by design).
//
// SIGUSR2 makes it say where it is, on stderr (the probe asks when it gives up waiting).
//
// Usage: node sse-tally.mjs <url> <bearer token> <minEntryBytes> <doneMarker>
// Prints one JSON line after the done entry, or when it gives up:
//   {"status":200,"frames":{"entry":101,...},"bigEntries":100,"duplicates":0,"lastSeq":104,"reconnects":0,"done":true,"bytes":...}
import http from 'node:http';

const [url, token, minEntryBytesText, doneMarker] = process.argv.slice(2);
if (!url || !token || !minEntryBytesText || !doneMarker) {
  process.stderr.write('usage: sse-tally.mjs <url> <token> <minEntryBytes> <doneMarker>\n');
  process.exit(2);
}
const minEntryBytes = Number(minEntryBytesText);
const marker = Buffer.from(doneMarker);
const SEPARATOR = Buffer.from('\n\n');
const ENTRY_HEAD = /^id: (\d+)\nevent: entry\n/;

const tally = { status: 0, frames: {}, bigEntries: 0, duplicates: 0, lastSeq: 0, reconnects: 0, done: false, bytes: 0 };
/** Where the reader is (told on SIGUSR2, by a probe that gave up waiting): connecting, reading, or closed; and when it last got bytes. */
const where = { phase: 'connecting', lastBytesAt: 0 };
/** A cut-off client comes back, as EventSource does; more than this many times in a row is a failure. */
const MAX_RECONNECTS = 100;
let reported = false;
const report = () => {
  if (reported) return;
  reported = true;
  process.stdout.write(`${JSON.stringify(tally)}\n`);
};

/** Reads one connection; resumes from the last entry's seq (Last-Event-ID) when the server cuts it off. */
function connect() {
  const headers = { accept: 'text/event-stream', authorization: `Bearer ${token}`, ...(tally.lastSeq > 0 && { 'last-event-id': String(tally.lastSeq) }) };
  where.phase = 'connecting';
  const request = http.get(url, { headers }, (response) => {
    where.phase = 'reading';
    tally.status = response.statusCode ?? 0;
    // The frame being read: its parts and its length (a frame cut off with the connection is dropped).
    let parts = [];
    let length = 0;
    const finishFrame = () => {
      const frame = parts.length === 1 ? parts[0] : Buffer.concat(parts, length);
      parts = [];
      length = 0;
      const head = frame.subarray(0, 64).toString('latin1');
      const event = /(?:^|\n)event: ([^\n]*)/.exec(head)?.[1] ?? (head.startsWith(':') || head.startsWith('retry:') ? 'comment' : 'message');
      tally.frames[event] = (tally.frames[event] ?? 0) + 1;
      const entry = ENTRY_HEAD.exec(head);
      if (!entry) return;
      const seq = Number(entry[1]);
      if (seq <= tally.lastSeq) {
        tally.duplicates++;
        return;
      }
      tally.lastSeq = seq;
      if (frame.length >= minEntryBytes) tally.bigEntries++;
      if (frame.indexOf(marker) >= 0) {
        tally.done = true;
        report();
        process.exit(0);
      }
    };
    let carry = 0; // 1 when the previous chunk ended in "\n" (a separator may straddle chunks)
    response.on('data', (chunk) => {
      tally.bytes += chunk.length;
      where.lastBytesAt = Date.now();
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
    response.on('error', () => undefined); // a reset when the server cuts us off: 'close' follows
    response.on('close', () => {
      where.phase = 'closed';
      if (tally.done) return;
      if (tally.status !== 200 || tally.reconnects >= MAX_RECONNECTS) return report();
      tally.reconnects++;
      connect();
    });
  });
  request.on('error', (error) => {
    tally.error = error.message;
    report();
  });
}

connect();
process.on('exit', report);
process.on('SIGUSR2', () => process.stderr.write(`sse-tally: ${JSON.stringify({ ...tally, ...where, msSinceBytes: Date.now() - where.lastBytesAt })}\n`));
