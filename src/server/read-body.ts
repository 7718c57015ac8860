/**
 * A request body read with its bytes counted as they stream in, chunked ones included: past the
 * limit the read stops and the request is refused (413 `BODY_TOO_LARGE`), so a client cannot make
 * the server hold more than the limit by leaving out or lying in `Content-Length`. What the client
 * still sends after that is discarded by the HTTP layer, never buffered.
 */
import { AseError } from '../errors.js';

export async function readBodyText(request: Request, limit: number): Promise<string> {
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      chunks.length = 0;
      await reader.cancel().catch(() => undefined);
      throw new AseError('BODY_TOO_LARGE', `request body over ${limit} bytes`, { details: { limit } });
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}
