/**
 * The inspector's pieces: XState inspection events in @statelyai/inspect's wire format with
 * secrets redacted, the chart replayed from a durable log (`chartAt`), and the DOT/JSON graphs.
 */
import { createActor, type InspectionEvent } from 'xstate';
import { describe, expect, it } from 'vitest';
import { chartAt, sessionMachine, toDot, toGraph, type TranscriptEntry } from '../../src/index.js';
import { InspectionEncoder, REDACTED, redact } from '../../src/server/inspection.js';

describe('inspection wire format', () => {
  it('encodes the actor with its definition, events with sourceId, snapshots with the context redacted', () => {
    const encoder = new InspectionEncoder('s1', sessionMachine);
    const wire: ReturnType<InspectionEncoder['encode']> = [];
    const actor = createActor(sessionMachine, {
      input: { sessionId: 's1', instance: 'i1', agent: 'fake', workDir: '/tmp', mode: 'remote', now: 0, options: { env: { API_KEY: 'sk-123' }, apiKey: 'sk-456', model: 'm' } },
      inspect: (event: InspectionEvent) => wire.push(...encoder.encode(event, 7)),
    });
    actor.start();
    actor.stop();
    const actorEvent = wire.find((w) => w.type === '@xstate.actor')!;
    expect(actorEvent).toMatchObject({ sessionId: 's1', seq: 7, name: 'SessionActor', _version: expect.any(String), id: expect.any(String), rootId: expect.any(String) });
    const definition = JSON.parse((actorEvent as { definition: string }).definition);
    expect(Object.keys(definition.states)).toEqual(['init', 'local', 'remote', 'handoff', 'switching', 'hibernated', 'recovering', 'failed', 'stopping', 'stopped']);
    const snapshots = wire.filter((w) => w.type === '@xstate.snapshot');
    expect(snapshots.length).toBeGreaterThan(0);
    const text = JSON.stringify(wire);
    expect(text).not.toContain('sk-123');
    expect(text).not.toContain('sk-456');
    expect(text).toContain(REDACTED);
    expect(wire.some((w) => w.type === 'effect')).toBe(true);
    // Revealing is a choice.
    const open = new InspectionEncoder('s1', sessionMachine, { revealSecrets: true });
    expect(JSON.stringify(open.snapshot({ value: 'x', context: { resumeToken: 't' } }))).toContain('"t"');
  });

  it('redacts by key, at any depth, and drops functions', () => {
    expect(redact({ a: 1, token: 'x', nested: [{ password: 'p', ok: true }], env: { HOME: '/h' }, fn: () => 1, authorization: null })).toEqual({
      a: 1,
      token: REDACTED,
      nested: [{ password: REDACTED, ok: true }],
      env: REDACTED,
      authorization: null,
    });
  });
});

describe('chartAt (the scrubber)', () => {
  let seq = 0;
  const e = (type: string, payload: unknown = {}, gen = 1): TranscriptEntry => ({ ts: 0, sessionId: 's', agent: 'fake', gen, eventId: `x.${gen}-${++seq}`, type, payload, seq });
  it('follows a session through a turn, a prompt, a mode switch, a crash and a stop', () => {
    seq = 0;
    const log = [
      e('session_identified', { resumeToken: 't' }),
      e('user_message', { localId: 'L1', text: 'hi' }),
      e('permission_request', { requestId: 'p1', toolName: 'Bash', input: {} }),
      e('permission_resolved', { requestId: 'p1', status: 'approved' }),
      e('turn_complete', { localId: 'L1', status: 'completed' }),
      e('mode_changed', { to: 'local' }),
      e('session_identified', {}, 2),
      e('exited', { code: 1, signal: null }, 2),
      e('session_identified', {}, 3),
      e('exited', { code: 0, signal: null }, 3),
    ];
    const at = (n: number) => chartAt(log.slice(0, n));
    expect(at(0)).toMatchObject({ value: 'init', seq: 0, active: ['session', 'session.init'] });
    expect(at(1).value).toEqual({ remote: 'idle' });
    expect(at(2)).toMatchObject({ value: { remote: 'running' }, turn: 'L1', active: ['session', 'session.remote', 'session.remote.running'] });
    expect(at(3).openPermissions).toEqual({ p1: 'Bash' });
    expect(at(4).openPermissions).toEqual({});
    expect(at(5)).toMatchObject({ value: { remote: 'idle' }, turn: null });
    expect(at(6)).toMatchObject({ value: 'switching', mode: 'local' });
    expect(at(7)).toMatchObject({ value: { local: 'active' }, gen: 2 });
    expect(at(8).value).toBe('recovering');
    expect(at(9).value).toEqual({ local: 'active' });
    expect(at(10)).toMatchObject({ value: 'stopped', seq: 10, lastType: 'exited' });
  });
});

describe('graphs', () => {
  it('toGraph nests states as the machine does, and toDot draws clusters and every edge', () => {
    const graph = toGraph(sessionMachine);
    const remote = graph.root.children.find((c) => c.key === 'remote')!;
    expect(remote.children.map((c) => c.key)).toEqual(['launching', 'confirming', 'idle', 'running', 'interrupting']);
    expect(remote.initial).toBe('session.remote.launching');
    const dot = toDot(sessionMachine);
    for (const edge of graph.edges) expect(dot).toContain(`label=${JSON.stringify(edge.guard ? `${edge.event} [${edge.guard}]` : edge.event)}`);
    expect(dot).toContain('"session.(any)" -> "session.stopping" [label="stop"]');
  });
});
