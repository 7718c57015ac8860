/**
 * `ase run --session-id ID "text"` when an `ase serve` runs on the data dir: the session is the
 * server's (it holds the lease, the page and the phone watch it there), so this terminal does not
 * fight it for the session. It sends the message through the server (which opens the session if it
 * is only stored), streams the reply from the session's event stream as `ase run` prints a turn of
 * its own (`--json`: the AgentEvents as NDJSON), answers permission prompts as `ase run` does (`--yes`, `--deny`, or y/n at a terminal),
 * and exits with the turn's outcome. Ctrl-C asks the server to abort the turn; a second one stops
 * waiting (the turn goes on in the server).
 */
import { randomUUID } from 'node:crypto';
import { AseError, ERROR_CODES, type AgentEvent, type ErrorCode, type SessionNotice } from '../index.js';
import { connect, RemoteError } from '../client.js';
import { serverRequest, type ServerTarget } from './attach.js';
import { permissionDecision } from './permission-decision.js';
import { NoticeRenderer, red, type Output } from './render.js';
import type { RunArgs } from './run-args.js';

/** The `permission_request` entry's fields this command reads. */
interface PromptFrame {
  requestId: string;
  toolName: string;
  input: unknown;
}

/** The ending entries of a turn (`turn_complete`, `turn_ended`) carry the message's localId and how it ended. */
interface TurnEndPayload {
  localId?: string;
  status?: string;
}

export async function runThroughServer(args: RunArgs & { sessionId: string }, server: ServerTarget & { pid: number }, output: Output): Promise<number> {
  const client = connect({ url: server.url, token: server.token });
  const at = `/api/sessions/${encodeURIComponent(args.sessionId)}`;
  // The stream starts after the newest entry: the reply is all this command prints.
  // (The API takes a cursor of at most 15 digits.)
  const newest = await serverRequest<{ entries: { seq: number }[] }>(server, 'GET', `${at}/transcript?before_seq=999999999999999&limit=1`);
  const afterSeq = newest.entries.at(-1)?.seq ?? 0;
  output.err(`session ${args.sessionId} (hosted by ase serve at ${server.url}, pid ${server.pid})\n`);

  const localId = randomUUID();
  const renderer = new NoticeRenderer(output);
  const stopWaiting = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts === 1) void client.abort(args.sessionId).catch(() => stopWaiting.abort());
    else stopWaiting.abort();
  };
  process.on('SIGINT', onSigint);
  const answering: Promise<void>[] = [];
  let started = false;
  let sent = false;
  /** Messages whose text deltas began before this turn was seen to start: printed whole from their entry instead. */
  const unstreamed = new Set<string>();
  const print = (event: AgentEvent) => {
    if (args.json) output.out(`${JSON.stringify(event)}\n`);
    else renderer.render({ type: 'agent', event } as SessionNotice);
  };
  try {
    for await (const event of client.events(args.sessionId, { afterSeq, signal: stopWaiting.signal })) {
      if (event.type === 'live' && !sent) {
        // Connected and caught up: whatever the turn streams from here is seen.
        sent = true;
        await client.send(args.sessionId, args.prompt, { localId });
      } else if (event.type === 'entry') {
        // What is printed comes from the durable entries, in their order: the ephemeral frames of
        // the same moment may come before the entry that says the turn is ours (its journaling is
        // async), and another client's turn may be running when this one is sent.
        const { entry } = event as { entry: { type: string; payload: unknown; gen: number; ts: number } };
        const payload = (entry.payload ?? {}) as TurnEndPayload & Record<string, unknown>;
        if (entry.type === 'user_message' && payload.localId === localId) started = true;
        else if (!started) continue;
        else if (entry.type === 'permission_request') {
          // Asked in this turn (one of another client's turn is theirs to answer); one refused by the session itself needs no answer.
          if (payload['refused'] !== true) answering.push(answer(payload as unknown as PromptFrame));
        } else if (entry.type === 'message' || entry.type === 'tool_call' || entry.type === 'tool_result') {
          print({ ...payload, type: entry.type, gen: entry.gen, at: entry.ts } as unknown as AgentEvent);
        } else if ((entry.type === 'turn_complete' || entry.type === 'turn_ended') && payload.localId === localId) {
          await Promise.allSettled(answering);
          if (entry.type === 'turn_complete') print({ ...payload, type: 'turn_complete', gen: entry.gen, at: entry.ts } as unknown as AgentEvent);
          else output.err(`turn ${payload.status ?? 'ended'}${typeof payload['reason'] === 'string' ? `: ${payload['reason']}` : ''}\n`);
          return payload.status === 'completed' ? 0 : 1;
        }
      } else if (event.type === 'agent') {
        // Text as it is typed, for messages of this turn seen from their first delta (not with --json: its events are the entries).
        const agentEvent = event.data as AgentEvent;
        if (agentEvent.type !== 'text_delta' || args.json) continue;
        if (!started) unstreamed.add(agentEvent.messageId);
        else if (!unstreamed.has(agentEvent.messageId)) print(agentEvent);
      } else if (event.type === 'error') {
        const { code, message } = event.data as { code: string; message: string };
        output.err(red(`error ${code}: ${message}\n`));
      } else if (event.type === 'done') {
        output.err(`session ${args.sessionId} ended before the turn did\n`);
        return 1;
      }
    }
    return 1;
  } catch (error) {
    if (stopWaiting.signal.aborted) {
      output.err(`stopped waiting; the turn goes on in ase serve (session ${args.sessionId})\n`);
      return 130;
    }
    // The server's own refusal keeps its code where it is one of ours (SESSION_OWNED, INVALID_INPUT, ...).
    if (error instanceof RemoteError) throw new AseError(error.status === 404 ? 'SESSION_NOT_FOUND' : isErrorCode(error.code) ? error.code : 'ENGINE_ERROR', `ase serve at ${server.url}: ${error.message}`, { cause: error });
    throw error;
  } finally {
    process.off('SIGINT', onSigint);
  }

  async function answer(prompt: PromptFrame): Promise<void> {
    const decision = await permissionDecision(prompt, args, output);
    try {
      await client.decide(args.sessionId, prompt.requestId, decision, decision === 'deny' ? { message: 'Denied by the ase user.' } : {});
    } catch (error) {
      // Answered meanwhile on the page or the phone (409 with what won), or the turn ended.
      if (!(error instanceof RemoteError)) throw error;
      output.err(`permission ${prompt.requestId}: ${error.message}\n`);
    }
  }
}

const isErrorCode = (code: string): code is ErrorCode => (ERROR_CODES as readonly string[]).includes(code);
