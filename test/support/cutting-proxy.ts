/**
 * A TCP proxy on 127.0.0.1 in front of a test server that cuts event-stream connections: once a
 * connection has asked for `/events`, it forwards only `cutAfter(n)` more bytes of the server's
 * answer (n = the how-many-th such connection, from 1), then destroys both sides, mid-frame if the
 * count says so. Everything else passes untouched. What each cut connection asked (`Last-Event-ID`)
 * and where it was cut are recorded, so a test can show the cuts happened where it meant them to.
 */
import net from 'node:net';

export interface CutRecord {
  /** The request's `Last-Event-ID` header, if any. */
  lastEventId: string | undefined;
  /** Bytes of the answer forwarded before the cut. */
  forwarded: number;
  /** The forwarded bytes ended inside a frame (not right after a blank line). */
  midFrame: boolean;
}

export interface CuttingProxy {
  url: string;
  /** Event-stream connections seen, and the cut ones. */
  readonly streams: number;
  readonly cuts: CutRecord[];
  close(): Promise<void>;
}

export async function startCuttingProxy(target: { host: string; port: number }, cutAfter: (n: number) => number | undefined): Promise<CuttingProxy> {
  let streams = 0;
  const cuts: CutRecord[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    const forget = () => {
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', forget);
    upstream.on('close', forget);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    let request = '';
    let budget: number | undefined;
    let forwarded = 0;
    let text = '';
    let lastEventId: string | undefined;
    client.on('data', (chunk: Buffer) => {
      if (budget === undefined && request.length < 65_536) {
        request += chunk.toString('latin1');
        // Anywhere in what the connection sent: a kept-alive connection may carry a POST (and its body) first.
        if (/GET \/[^ ]*\/events[ ?]/.test(request) && /GET \/[^ ]*\/events[^]*?\r\n\r\n/.test(request)) {
          streams++;
          lastEventId = /^last-event-id: *(.*)\r$/im.exec(request)?.[1];
          budget = cutAfter(streams) ?? Infinity;
        }
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (budget === undefined || forwarded + chunk.length <= budget) {
        if (budget !== undefined) {
          forwarded += chunk.length;
          text += chunk.toString('latin1');
        }
        client.write(chunk);
        return;
      }
      const part = chunk.subarray(0, budget - forwarded);
      forwarded += part.length;
      text += part.toString('latin1');
      cuts.push({ lastEventId, forwarded, midFrame: endsInsideFrame(text) });
      budget = undefined; // recorded once
      client.end(part, () => client.destroy());
      upstream.destroy();
    });
    upstream.on('end', () => client.end());
    client.on('end', () => upstream.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get streams() {
      return streams;
    },
    cuts,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Whether the forwarded answer stops inside an SSE frame: past the HTTP head, some bytes of a frame
 * (its `id:`, `event:` or `data:` lines) came after the last blank line. The body is chunked, so the
 * framing of the next chunk (`\r\n<size>\r\n`) after a blank line is not a frame yet.
 */
function endsInsideFrame(answer: string): boolean {
  const head = answer.indexOf('\r\n\r\n');
  if (head < 0) return false;
  const body = answer.slice(head + 4);
  const blank = body.lastIndexOf('\n\n');
  const rest = blank < 0 ? body : body.slice(blank + 2);
  return rest.replace(/^(\r\n?)?([0-9a-fA-F]+(\r\n?)?)?/, '').length > 0;
}
