/**
 * Repeated message ids (issue 11): what a buggy or hostile agent can send must not make the claude
 * translator keep more per id, or emit bigger events, the longer it goes on. A reference model
 * says what a `message` event carries: the blocks of its id since that id's last `message_start`,
 * restarted after MAX_ASSEMBLED_BLOCKS; the translator must match it and hold a bounded number of
 * blocks, whatever the order of starts, blocks and ids.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ClaudeTranslator, MAX_ASSEMBLED_BLOCKS, MAX_ASSEMBLED_MESSAGES } from '../../src/engines/claude/translate.js';
import type { AgentEventBody } from '../../src/events/agent-event.js';

const RUNS = Number(process.env.FC_RUNS ?? 200);

const start = (id: string) => ({ type: 'stream_event', event: { type: 'message_start', message: { id } }, api_message_id: id, parent_tool_use_id: null });
const block = (id: string, text: string) => ({ type: 'assistant', message: { id, content: [{ type: 'text', text }] }, parent_tool_use_id: null });
const delta = (id: string, text: string) => ({ type: 'stream_event', event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }, api_message_id: id });

const messages = (bodies: AgentEventBody[]) => bodies.filter((b): b is Extract<AgentEventBody, { type: 'message' }> => b.type === 'message');

describe('ClaudeTranslator on repeated message ids', () => {
  it('holds a bounded number of blocks and emits bounded messages for 20,000 blocks under one id', () => {
    const translator = new ClaudeTranslator();
    let largest = 0;
    for (let i = 0; i < 20_000; i++) {
      const [message] = messages(translator.translate(block('msg_same', `b${i}`)));
      largest = Math.max(largest, message!.blocks.length);
      expect(translator.heldBlocks).toBeLessThanOrEqual(MAX_ASSEMBLED_BLOCKS);
    }
    expect(largest).toBe(MAX_ASSEMBLED_BLOCKS);
  });

  it('treats each message_start as a new message: the fixture-shaped repeated stream emits one block per message', () => {
    const translator = new ClaudeTranslator();
    for (let i = 0; i < 5_000; i++) {
      translator.translate(start('msg_same'));
      expect(translator.translate(delta('msg_same', 'x'))).toEqual([{ type: 'text_delta', messageId: 'msg_same', text: 'x' }]);
      const [message] = messages(translator.translate(block('msg_same', `b${i}`)));
      expect(message!.blocks).toEqual([{ type: 'text', text: `b${i}` }]);
    }
    expect(translator.heldBlocks).toBe(1);
  });

  it('matches the reference model and stays bounded for any order of starts and blocks over any ids', () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant('start' as const), id: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant('block' as const), id: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant('repeat' as const), count: fc.integer({ min: 1, max: 150 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const translator = new ClaudeTranslator();
        /** The reference: blocks since the id's last start, restarted at the cap; ids beyond the limit forgotten oldest first. */
        const model = new Map<string, string[]>();
        let n = 0;
        const addBlock = (id: string) => {
          const text = `b${n++}`;
          let blocks = model.get(id);
          if (!blocks || blocks.length >= MAX_ASSEMBLED_BLOCKS) {
            blocks = [];
            model.delete(id);
            if (model.size >= MAX_ASSEMBLED_MESSAGES) model.delete(model.keys().next().value!);
            model.set(id, blocks);
          }
          blocks.push(text);
          const [message] = messages(translator.translate(block(id, text)));
          expect(message!.blocks.map((b) => (b as { text: string }).text)).toEqual(blocks);
        };
        let last = 'm0';
        for (const s of steps) {
          if (s.kind === 'start') {
            last = `m${s.id}`;
            model.delete(last);
            translator.translate(start(last));
          } else if (s.kind === 'block') {
            last = `m${s.id}`;
            addBlock(last);
          } else {
            for (let i = 0; i < s.count; i++) addBlock(last);
          }
          expect(translator.heldBlocks).toBeLessThanOrEqual(MAX_ASSEMBLED_BLOCKS * MAX_ASSEMBLED_MESSAGES);
          expect(translator.heldBlocks).toBe([...model.values()].reduce((sum, b) => sum + b.length, 0));
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('does not grow the heap with 100,000 repeated-id lines (retained after a full GC)', () => {
    const gc = (globalThis as { gc?: () => void }).gc;
    const translator = new ClaudeTranslator();
    const run = (count: number) => {
      for (let i = 0; i < count; i++) {
        translator.translate(start('msg_same'));
        translator.translate(block('msg_same', `some streamed text ${i}`));
        translator.translate(block('msg_same', `and another block ${i}`));
      }
    };
    run(1_000);
    gc?.();
    const before = process.memoryUsage().heapUsed;
    run(100_000);
    gc?.();
    const after = process.memoryUsage().heapUsed;
    expect(translator.heldBlocks).toBe(2);
    // Without a forced GC the number is noisy; the held-blocks bound above is the exact check.
    if (gc) expect(after - before).toBeLessThan(4 * 1024 * 1024);
  });
});
