#!/usr/bin/env node
// The stand-in for a line-based agent: what the template engine (line-engine.mjs) drives. A real
// agent CLI would call a model; this one follows the directives of the kit's standInDriver() (a
// prompt of JSON `{"standIn": …}`) and answers "ok" to anything else, so the engine can be tested
// with no model. Its protocol, one line each way, words then a JSON argument:
//
//   agent → host   READY <session-id>            started (or resumed: `--resume <id>` keeps the id)
//                  TEXT <json string>            a piece of the answer
//                  TOOL <call-id> <json input>   it runs a tool
//                  RESULT <call-id> <ok|denied|failed> <json output>
//                  ASK <call-id> <json input>    it asks before running a tool
//                  DONE <input tokens> <output tokens>   the turn ended
//                  FAIL <json message>           the turn failed (the model request failed)
//                  CANCELLED                     the turn was cancelled
//   host → agent   PROMPT <json string>  |  ALLOW <call-id>  |  DENY <call-id>  |  CANCEL
//
// It exits when its stdin ends.
import { randomUUID } from 'node:crypto';

const resume = process.argv.indexOf('--resume');
const sessionId = resume >= 0 ? process.argv[resume + 1] : randomUUID();
const say = (line) => process.stdout.write(`${line}\n`);
let calls = 0;
/** What CANCEL ends, and the call waiting for ALLOW/DENY. */
let running;
let asking;

function directive(text) {
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && 'standIn' in parsed) return parsed;
  } catch {
    // a plain prompt
  }
  return { standIn: 'text', answer: 'ok' };
}

function answer(text) {
  say(`TEXT ${JSON.stringify(text)}`);
  say('DONE 12 7');
  running = undefined;
}

function prompt(d) {
  running = d;
  const then = d.answer ?? d.then ?? 'ok';
  switch (d.standIn) {
    case 'failure':
      running = undefined;
      return say(`FAIL ${JSON.stringify('the model request failed (stand-in)')}`);
    case 'stall':
      return say(`TEXT ${JSON.stringify('Thinking it over')}`);
    case 'bad':
      if (d.kind === 'huge') process.stdout.write(`${'x'.repeat(4 * 1024 * 1024)}\n`);
      else if (d.kind === 'truncated') process.stdout.write('TEXT "cut sh\n');
      else say('this line means nothing');
      return answer(then);
    case 'tool': {
      const id = `call-${++calls}`;
      say(`TOOL ${id} ${JSON.stringify({ command: d.command })}`);
      say(`RESULT ${id} ok ${JSON.stringify('conformance')}`);
      return answer(then);
    }
    case 'permission': {
      const id = `call-${++calls}`;
      asking = { id, then };
      say(`TOOL ${id} ${JSON.stringify({ command: d.command })}`);
      return say(`ASK ${id} ${JSON.stringify({ command: d.command })}`);
    }
    default:
      return answer(then);
  }
}

function handle(line) {
  const [word, ...rest] = line.split(' ');
  const arg = rest.join(' ');
  if (word === 'PROMPT') prompt(directive(JSON.parse(arg)));
  else if ((word === 'ALLOW' || word === 'DENY') && asking?.id === arg) {
    const { id, then } = asking;
    asking = undefined;
    say(`RESULT ${id} ${word === 'ALLOW' ? 'ok' : 'denied'} ${JSON.stringify(word === 'ALLOW' ? 'done' : 'refused by the user')}`);
    answer(then);
  } else if (word === 'CANCEL' && running) {
    running = undefined;
    asking = undefined;
    say('CANCELLED');
  }
}

say(`READY ${sessionId}`);
let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
    const line = buffer.slice(0, nl).trim();
    buffer = buffer.slice(nl + 1);
    if (line) handle(line);
  }
});
process.stdin.on('end', () => process.exit(0));
