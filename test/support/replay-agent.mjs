// A stand-in agent CLI that replays a recorded engine fixture (see engine-fixture.ts).
//
// It waits for each line the host writes, checks it against the next `to_agent` record (ids the
// host mints are mapped, everything else must be equal), then writes the `from_agent` records that
// followed it in the recording, up to the next `to_agent` record. On stdin EOF it writes what is
// left and exits the way the recorded process did. A host line that differs from the recording is
// fatal: the reason goes to stderr and the process exits 9, so the test sees an engine error.
//
// Env: REPLAY_FIXTURE (path), REPLAY_VARS (JSON: placeholder → value for this run).
import { readFileSync } from 'node:fs';

const vars = Object.entries(JSON.parse(process.env.REPLAY_VARS ?? '{}'));
const fillIn = (line) => vars.reduce((out, [placeholder, value]) => out.split(placeholder).join(value), line);
const records = readFileSync(process.env.REPLAY_FIXTURE, 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(fillIn(line)));
const exited = records.findLast((r) => r.dir === 'event' && r.event.type === 'exited')?.event;
const traffic = records.filter((r) => r.dir !== 'event');

/** fixture id → id the host actually used, for requests the host started. */
const hostIds = new Map();
let cursor = 0;
let hostLines = 0;

const canonical = (value) =>
  JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );

/** The id of a request the host started: Claude's control_request `request_id`, JSON-RPC's `id` on a request. */
function hostRequestId(msg) {
  if (!msg || typeof msg !== 'object') return undefined;
  if (msg.type === 'control_request' && typeof msg.request_id === 'string') return { key: 'request_id', id: msg.request_id };
  if (typeof msg.method === 'string' && msg.id !== undefined) return { key: 'id', id: msg.id };
  return undefined;
}

/** Rewrites the id of a response to a host request from the recorded id to the one the host used now. */
function mapResponseId(msg) {
  if (!msg || typeof msg !== 'object') return msg;
  if (msg.type === 'control_response' && msg.response && hostIds.has(msg.response.request_id)) {
    return { ...msg, response: { ...msg.response, request_id: hostIds.get(msg.response.request_id) } };
  }
  if (msg.method === undefined && msg.id !== undefined && hostIds.has(msg.id)) return { ...msg, id: hostIds.get(msg.id) };
  return msg;
}

function fail(reason) {
  process.stderr.write(`replay: ${reason}\n`);
  process.exit(9);
}

function writeAgentLines() {
  while (cursor < traffic.length && traffic[cursor].dir === 'from_agent') {
    const r = traffic[cursor++];
    process.stdout.write(('raw' in r ? r.raw : JSON.stringify(mapResponseId(r.msg))) + '\n');
  }
}

function onHostLine(line) {
  hostLines++;
  const expected = traffic[cursor];
  if (!expected || expected.dir !== 'to_agent') fail(`host line ${hostLines} was not in the recording: ${line.slice(0, 300)}`);
  let got;
  try {
    got = JSON.parse(line);
  } catch {
    if (expected.raw !== line) fail(`host line ${hostLines} is not JSON: ${line.slice(0, 300)}`);
  }
  if (got !== undefined) {
    const recorded = hostRequestId(expected.msg);
    const actual = hostRequestId(got);
    if (recorded && actual && recorded.key === actual.key) {
      hostIds.set(recorded.id, actual.id);
      got = { ...got, [actual.key]: recorded.id };
    }
    if (canonical(got) !== canonical(expected.msg)) {
      fail(`host line ${hostLines} differs from the recording\n  expected: ${canonical(expected.msg).slice(0, 600)}\n  got:      ${canonical(got).slice(0, 600)}`);
    }
  }
  cursor++;
  writeAgentLines();
}

let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    if (line.trim() !== '') onHostLine(line);
  }
});
process.stdin.on('end', () => {
  const missing = traffic.slice(cursor).filter((r) => r.dir === 'to_agent').length;
  if (missing > 0) fail(`stdin ended with ${missing} recorded host line(s) still to come`);
  writeAgentLines();
  const finish = () => {
    if (exited?.signal) process.kill(process.pid, exited.signal);
    process.exit(exited?.code ?? 0);
  };
  // Exit only once stdout is flushed: a pipe write can still be pending.
  if (process.stdout.writableNeedDrain) process.stdout.once('drain', finish);
  else setImmediate(finish);
});
writeAgentLines(); // what the agent printed before the host's first line (usually nothing)
