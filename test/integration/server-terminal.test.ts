/**
 * `GET /api/sessions/:id/terminal` of a real `ase serve` (HTTP server, `ws` WebSockets): who may
 * connect (token, ticket, Origin), one writer and read-only viewers, resize reaching the PTY, the
 * repaint a late viewer gets, the mode frame, and the byte bound that cuts a client that reads
 * nothing.
 *
 * The fake engine has no terminal UI, so the terminal here is a real PTY (transport/pty-process)
 * running a small shell program, attached to the session's terminal host exactly as a local-mode
 * engine attaches its terminal UI. The real CLIs go through the same room in
 * test/real-cli/ase-serve-attach-tmux.test.ts.
 */
import { tmpdir } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnPty, type PtyProcess } from '../../src/engines/transport/pty-process.js';
import { openTerminal, type TerminalTestClient } from '../support/terminal-client.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm-256color', LANG: 'C.UTF-8' };

describe('the terminal WebSocket of ase serve', () => {
  let server: TestServer;
  let id: string;
  const ptys: PtyProcess[] = [];
  const clients: TerminalTestClient[] = [];

  beforeEach(async () => {
    server = await startTestServer({}, { maxTerminalBufferedBytes: 64 * 1024 });
    id = await server.newSession();
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) client.socket.terminate();
    for (const pty of ptys.splice(0)) await pty.stop();
    await server.stop();
  });

  const url = () => `${server.url}/api/sessions/${id}/terminal`;
  const bearer = () => ({ authorization: `Bearer ${server.token}` });
  async function connect(role: 'writer' | 'viewer', extra: { headers?: Record<string, string>; ticket?: string } = {}): Promise<TerminalTestClient> {
    const opened = await openTerminal(url(), { role, headers: extra.headers ?? bearer(), ...(extra.ticket && { ticket: extra.ticket }) });
    if ('refused' in opened) throw new Error(`refused with ${opened.refused}`);
    clients.push(opened);
    return opened;
  }
  /** A real PTY running `script`, attached to the session's terminal as a local engine's would be. */
  async function attachPty(script: string): Promise<PtyProcess> {
    const session = server.host.get(id)!;
    const size = session.terminal.size() ?? { cols: 80, rows: 24 };
    const pty = await spawnPty({ file: 'sh', args: ['-c', script], cwd: tmpdir(), env, cols: size.cols, rows: size.rows });
    ptys.push(pty);
    session.terminal.attach(1, pty);
    return pty;
  }

  it('refuses before the upgrade: no token, a wrong token, a spent or foreign ticket, a foreign Origin, an unknown session, a bad role', async () => {
    expect(await openTerminal(url(), {})).toEqual({ refused: 401 });
    expect(await openTerminal(url(), { headers: { authorization: 'Bearer not-the-token-at-all' } })).toEqual({ refused: 401 });
    expect(await openTerminal(url(), { ticket: 'made-up-ticket' })).toEqual({ refused: 401 });
    const other = await server.newSession();
    const foreign = (await server.api('POST', '/api/tickets', { sessionId: other })).body.ticket as string;
    expect(await openTerminal(url(), { ticket: foreign })).toEqual({ refused: 401 });
    expect(await openTerminal(url(), { headers: { ...bearer(), origin: 'https://evil.example' } })).toEqual({ refused: 403 });
    expect(await openTerminal(`${server.url}/api/sessions/no-such-session/terminal`, { headers: bearer() })).toEqual({ refused: 404 });
    expect(await openTerminal(url(), { headers: bearer(), role: 'boss' as 'writer' })).toEqual({ refused: 400 });
    // A plain GET (no upgrade) is told what to do.
    expect((await server.api('GET', `/api/sessions/${id}/terminal`)).status).toBe(426);

    // A ticket opens it once; the server's own Origin is fine.
    const ticket = (await server.api('POST', '/api/tickets', { sessionId: id })).body.ticket as string;
    const viewer = await connect('viewer', { headers: { origin: server.url }, ticket });
    await viewer.waitFor(() => viewer.statuses[0], 'status');
    expect(viewer.statuses[0]).toMatchObject({ type: 'status', sessionId: id, mode: 'remote', role: 'viewer', writerAttached: false, running: false });
    expect(await openTerminal(url(), { ticket })).toEqual({ refused: 401 });
  });

  it('one writer types, a second writer is refused, viewers see everything and their keys go nowhere', async () => {
    const writer = await connect('writer');
    await writer.waitFor(() => writer.statuses.find((s) => s.writerAttached && s.role === 'writer'), 'writer status');
    const viewer = await connect('viewer');
    await viewer.waitFor(() => viewer.statuses[0]?.writerAttached === true, 'viewer told a writer is there');

    const second = await openTerminal(url(), { role: 'writer', headers: bearer() });
    if ('refused' in second) throw new Error('the second writer must be upgraded, then closed');
    clients.push(second);
    expect(await second.closed).toEqual({ code: 4409, reason: 'a desk is already attached' });

    // `cat` in a PTY: the line discipline echoes what is typed, cat prints it back after Enter.
    await attachPty('stty -echoctl; exec cat');
    await viewer.waitFor(() => viewer.statuses.at(-1)?.running === true, 'running status');
    viewer.type('VIEWER-KEYS\r');
    writer.type('from-the-desk\r');
    await viewer.waitFor(() => /from-the-desk\r\n[\s\S]*from-the-desk/.test(viewer.output()), 'the desk line echoed and printed');
    await writer.waitFor(() => /from-the-desk[\s\S]*from-the-desk/.test(writer.output()), 'the writer sees it too');
    expect(viewer.output() + writer.output()).not.toContain('VIEWER-KEYS');

    // The viewer's statuses from now on: each change below waits for its own status (a client sees its
    // close before the server has run its leave, so a writer connecting at once could find the place taken).
    const toldAfter = (from: number, attached: boolean, what: string) => viewer.waitFor(() => viewer.statuses.slice(from).some((s) => s.writerAttached === attached), what);
    // The writer leaves: everyone is told, and a new writer may come.
    let from = viewer.statuses.length;
    writer.close();
    await toldAfter(from, false, 'writer gone');
    from = viewer.statuses.length;
    const next = await connect('writer');
    await next.waitFor(() => next.statuses.at(-1)?.role === 'writer', 'new writer');
    await toldAfter(from, true, 'viewer told of the new writer');
    // A desk killed outright (no close frame): its place is free again.
    from = viewer.statuses.length;
    next.socket.terminate();
    await toldAfter(from, false, 'killed writer gone');
    from = viewer.statuses.length;
    const third = await connect('writer');
    await third.waitFor(() => third.statuses.at(-1)?.role === 'writer', 'writer after a killed one');
    await toldAfter(from, true, 'viewer told of the third writer');
    // A frame over 1 MiB is refused by closing that connection (1009); the terminal goes on.
    from = viewer.statuses.length;
    third.socket.send(Buffer.alloc(2 * 1024 * 1024, 0x61));
    expect((await third.closed).code).toBe(1009);
    await toldAfter(from, false, 'the oversized writer gone');
    const fourth = await connect('writer');
    await fourth.waitFor(() => fourth.statuses.at(-1)?.role === 'writer', 'writer after an oversized frame');
    fourth.type('still-typing\r');
    await viewer.waitFor(() => /still-typing[\s\S]*still-typing/.test(viewer.output()), 'the terminal still works');
    // A desk that reconnects the moment it closes (no wait for its close to reach the server): the new
    // connection waits for the place (terminal-room.ts) instead of being refused with 4409.
    fourth.close();
    const fifth = await connect('writer');
    await fifth.waitFor(() => fifth.statuses.at(-1)?.role === 'writer', 'the reconnected desk gets the place');
    fifth.type('reconnected\r');
    await viewer.waitFor(() => /reconnected[\s\S]*reconnected/.test(viewer.output()), 'its keys reach the terminal');
  });

  it("the writer's resize reaches the PTY, and a late viewer is repainted the screen at the new size", async () => {
    const writer = await connect('writer');
    await attachPty(`trap 'echo SIZE=$(stty size)' WINCH; echo screen-before-you-came; while :; do sleep 0.05; done`);
    await writer.waitFor(() => writer.output().includes('screen-before-you-came'), 'first output');
    writer.control({ type: 'resize', cols: 91, rows: 27 });
    await writer.waitFor(() => writer.output().includes('SIZE=27 91'), 'the PTY resized');
    await writer.waitFor(() => writer.statuses.find((s) => s.cols === 91 && s.rows === 27), 'status with the size');
    // Nonsense sizes are ignored.
    writer.control({ type: 'resize', cols: 0, rows: -1 });
    writer.control({ type: 'resize', cols: 100_000, rows: 5 });
    writer.socket.send('{not json');

    const late = await connect('viewer');
    const first = await late.waitFor(() => late.statuses[0], 'status');
    expect(first).toMatchObject({ cols: 91, rows: 27, running: true, writerAttached: true });
    const screen = await late.waitFor(() => late.output().includes('screen-before-you-came') && late.output(), 'the repaint');
    expect(screen).toContain('SIZE=27 91');
    expect(server.host.get(id)!.terminal.dimensions()).toEqual({ cols: 91, rows: 27 });
  });

  it('a mode frame from the writer switches the session; every client is told the mode', async () => {
    const writer = await connect('writer');
    const viewer = await connect('viewer');
    await viewer.waitFor(() => viewer.statuses.at(-1)?.mode === 'remote', 'remote');
    viewer.control({ type: 'mode', to: 'local' }); // a viewer cannot
    writer.control({ type: 'mode', to: 'local' });
    await viewer.waitFor(() => viewer.statuses.at(-1)?.mode === 'local', 'local');
    expect(server.host.get(id)!.snapshot().mode).toBe('local');
    writer.control({ type: 'mode', to: 'remote' });
    await writer.waitFor(() => writer.statuses.at(-1)?.mode === 'remote', 'remote again');
  });

  it('a client that reads nothing is cut by the byte bound while the others keep going', async () => {
    const slow = await connect('viewer');
    const reader = await connect('viewer');
    await slow.waitFor(() => slow.statuses[0], 'status');
    // The slow client stops reading its socket: the kernel's buffers fill, then the server's queue.
    (slow.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    // About 8 MB of output, more than the socket buffers (4 MiB send, 128 KiB receive) and the 64 KiB bound.
    await attachPty(`i=0; while [ $i -lt 80 ]; do head -c 100000 /dev/zero | tr '\\0' x; i=$((i+1)); done; echo; echo FLOOD-DONE; sleep 600`);
    await reader.waitFor(() => reader.tail().includes('FLOOD-DONE'), 'the reader got everything', 120_000);
    expect(reader.bytes()).toBeGreaterThan(8_000_000);
    (slow.socket as unknown as { _socket: { resume(): void } })._socket.resume();
    const closed = await slow.closed;
    // 1008 when the close frame got through behind the unread bytes, 1006 when the grace ran out first.
    expect([1008, 1006]).toContain(closed.code);
    expect(slow.bytes()).toBeLessThan(8_000_000);
  }, 180_000);

  it('when the session ends its terminal clients are closed with 1000', async () => {
    const viewer = await connect('viewer');
    await viewer.waitFor(() => viewer.statuses[0], 'status');
    await server.api('POST', `/api/sessions/${id}/stop`, {});
    expect(await viewer.closed).toEqual({ code: 1000, reason: 'the session ended' });
  });
});
