// Event-stream clients for the replay benchmark, in a process of their own (so the server's event
// loop and memory are measured without them). argv[2] (JSON): { url, token, sessionId, clients,
// afterSeq }. Opens `clients` streams at once from `afterSeq`, reads each until its `live` frame
// (counting `entry` frames, without parsing their JSON), and prints {ms, entries} per client.
const { url, token, sessionId, clients, afterSeq } = JSON.parse(process.argv[2]);
const started = performance.now();

async function one() {
  const response = await fetch(`${url}/api/sessions/${sessionId}/events?after_seq=${afterSeq}`, { headers: { authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let entries = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the stream ended before its live frame');
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (frame.includes('\nevent: entry\n')) entries++;
      else if (frame.startsWith('event: live') || frame.includes('\nevent: live')) {
        await reader.cancel();
        return { ms: performance.now() - started, entries };
      }
    }
  }
}

const results = await Promise.all(Array.from({ length: clients }, one));
process.stdout.write(`${JSON.stringify(results)}\n`);
