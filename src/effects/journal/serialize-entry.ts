/**
 * A transcript entry as the JSON a journal stores, without its `seq` (the journal assigns it):
 * serialized when it is appended, so a caller changing the entry afterwards cannot change what is
 * written. The file and PostgreSQL journals both append this text.
 */
import type { TranscriptEntry } from '../../events/transcript-entry.js';

/** The entry's JSON object without `seq`; throws when it does not serialize as a JSON object. */
export function serializeEntry(entry: TranscriptEntry): string {
  let own: object = entry;
  if (Object.hasOwn(entry, 'seq')) {
    const { seq: _replaced, ...rest } = entry;
    own = rest;
  }
  const json = JSON.stringify(own) as string | undefined;
  if (json === undefined || !json.startsWith('{')) throw new Error('it does not serialize as a JSON object');
  return json;
}
