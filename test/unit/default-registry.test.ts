/**
 * defaultRegistry(): a fresh registry per call over built-in factories built once per process
 * (issue 24: building them parsed every engine's default options on each createSession). Sharing
 * must not leak: registering into one registry leaves the next untouched, and a shared factory
 * cannot be changed.
 */
import { describe, expect, it } from 'vitest';
import { defaultRegistry } from '../../src/engines/default-registry.js';
import { fakeEngine } from '../../src/engines/fake/index.js';

describe('defaultRegistry', () => {
  it('is a fresh registry each call: a replacement registered in one is not in the next', () => {
    const first = defaultRegistry();
    const scripted = fakeEngine({ resumeToken: 'scripted' });
    first.register(scripted);
    expect(first.get('fake')).toBe(scripted);
    const second = defaultRegistry();
    expect(second.get('fake')).not.toBe(scripted);
    expect(second.names()).toEqual(['fake', 'claude', 'codex', 'codex-mcp', 'acp', 'codex-exec', 'claude-print']);
  });

  it('shares the built-in factories, frozen', () => {
    const claude = defaultRegistry().get('claude');
    expect(defaultRegistry().get('claude')).toBe(claude);
    expect(Object.isFrozen(claude)).toBe(true);
    expect(() => {
      (claude as { name: string }).name = 'changed';
    }).toThrow(TypeError);
  });
});
