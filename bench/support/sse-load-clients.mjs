// Event-stream clients for the server benchmark, in a process of their own (so the server's heap and
// event loop are measured without them). Config (argv[2], JSON): { url, token, streams: [{ sessionId,
// clients, measure }] }. Prints "ready" once every stream replayed (its `live` frame); on stdin
// "report" prints {ephemeral, durable, frames} and starts counting afresh (latencies in ms of frames carrying "T:<epoch ms>"
// from measured sessions); on "exit", closes everything and exits.
import { createInterface } from 'node:readline';

const config = JSON.parse(process.argv[2]);
const now = () => performance.timeOrigin + performance.now();
const ephemeral = [];
const durable = [];
let frames = 0;
const controllers = [];
let live = 0;
const total = config.streams.reduce((n, s) => n + s.clients, 0);

function onFrame(event, data, measure) {
  frames++;
  if (event === 'live') {
    if (++live === total) process.stdout.write('ready\n');
    return;
  }
  if (!measure) return;
  if (event === 'agent' && data.includes('"T:')) {
    const parsed = JSON.parse(data);
    if (parsed.type === 'text_delta' && parsed.text.startsWith('T:')) ephemeral.push(now() - Number(parsed.text.slice(2)));
  } else if (event === 'entry' && data.includes('"T:')) {
    const parsed = JSON.parse(data);
    const text = parsed.payload?.blocks?.[0]?.text;
    if (parsed.type === 'message' && typeof text === 'string' && text.startsWith('T:')) durable.push(now() - Number(text.slice(2)));
  }
}

async function open(sessionId, measure) {
  const controller = new AbortController();
  controllers.push(controller);
  const response = await fetch(`${config.url}/api/sessions/${sessionId}/events`, { headers: { authorization: `Bearer ${config.token}` }, signal: controller.signal });
  if (!response.ok) throw new Error(`stream ${sessionId}: ${response.status}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let event = 'message';
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) data.push(line.slice(6));
        }
        if (data.length > 0) onFrame(event, data.join('\n'), measure);
      }
    }
  } catch {
    // closed on exit
  }
}

for (const stream of config.streams) for (let i = 0; i < stream.clients; i++) void open(stream.sessionId, stream.measure).catch((e) => { process.stderr.write(`${e.message}\n`); process.exit(1); });

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'report') {
    process.stdout.write(`${JSON.stringify({ ephemeral, durable, frames })}\n`);
    // The next phase starts from zero.
    ephemeral.length = 0;
    durable.length = 0;
    frames = 0;
  }
  if (line === 'exit') {
    for (const c of controllers) c.abort();
    setTimeout(() => process.exit(0), 50);
  }
});
