/**
 * NoticeBus: delivery order (typed listeners, then '*'), and `listens`, which the session asks
 * before it builds a notice (issue 24: a dense turn makes thousands nobody may listen to).
 */
import { describe, expect, it } from 'vitest';
import { NoticeBus } from '../../src/session/notice-bus.js';
import type { SessionNotice } from '../../src/session/notices.js';

const thinking = { type: 'thinking', active: true } as unknown as SessionNotice;

describe('NoticeBus', () => {
  it('listens to a type only while a listener of that type or of every notice is subscribed', () => {
    const bus = new NoticeBus();
    expect(bus.listens('thinking')).toBe(false);
    const offTyped = bus.on('thinking', () => undefined);
    expect(bus.listens('thinking')).toBe(true);
    expect(bus.listens('transcript')).toBe(false);
    offTyped();
    expect(bus.listens('thinking')).toBe(false);
    const offAll = bus.on('*', () => undefined);
    expect(bus.listens('transcript')).toBe(true);
    offAll();
    expect(bus.listens('transcript')).toBe(false);
  });

  it('delivers to the type\'s listeners in subscription order, then to the \'*\' ones', () => {
    const bus = new NoticeBus();
    const heard: string[] = [];
    bus.on('*', () => heard.push('all'));
    bus.on('thinking', () => heard.push('first'));
    bus.on('thinking', () => heard.push('second'));
    bus.on('transcript', () => heard.push('other type'));
    bus.emit(thinking);
    expect(heard).toEqual(['first', 'second', 'all']);
  });
});
