/**
 * The claude engine checks its hot messages (`stream_event`, `assistant`, `user`) by hand instead of
 * parsing them with their zod schemas (issue 24: the parse cost more than the translation). The
 * hand checks must give the schemas' verdicts: a message classifies as its kind exactly when its
 * schema accepts it, and then as what the schema returns; otherwise as `unknown`. Generated from
 * valid messages with any field swapped for a value of another type, removed, or added.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AssistantMessageSchema, classifyClaudeMessage, StreamEventSchema, UserMessageSchema } from '../../src/engines/claude/messages.js';

const RUNS = Number(process.env.FC_RUNS ?? 300);

/** Any JSON value a field might hold instead of the right one. */
const anyValue = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.string({ maxLength: 4 }),
  fc.integer(),
  fc.boolean(),
  fc.constant({}),
  fc.constant([]),
  fc.constant([{}]),
  fc.constant({ type: 'text' }),
);

/** A field of the template, or the wrong value in its place (undefined: removed). */
const field = <T>(right: T) => fc.oneof({ weight: 3, arbitrary: fc.constant(right) }, { weight: 1, arbitrary: anyValue });

/** An object of the template's fields, each maybe replaced, with `undefined` ones left out. */
const objectOf = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record(fields).map((o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)));

const streamEvent = objectOf({
  type: fc.constant('stream_event'),
  event: fc.oneof(
    objectOf({
      type: field('content_block_delta'),
      index: field(0),
      delta: fc.oneof(objectOf({ type: field('text_delta'), text: field('hi'), thinking: field(undefined) }), anyValue),
      content_block: fc.oneof(objectOf({ type: field('text') }), anyValue),
      message: fc.oneof(objectOf({ id: field('msg_1') }), anyValue),
    }),
    anyValue,
  ),
  api_message_id: field('msg_1'),
  parent_tool_use_id: field(null),
  uuid: field('u-1'),
});

const contentBlock = fc.oneof(
  objectOf({ type: field('text'), text: field('hello'), thinking: field(undefined), id: field(undefined), name: field(undefined), input: field(undefined) }),
  objectOf({ type: field('tool_use'), id: field('toolu_1'), name: field('Bash'), input: field({ command: 'ls' }) }),
  anyValue,
);
const assistant = objectOf({
  type: fc.constant('assistant'),
  message: fc.oneof(
    objectOf({ id: field('msg_1'), model: field('claude-x'), content: fc.oneof({ weight: 3, arbitrary: fc.array(contentBlock, { maxLength: 3 }) }, { weight: 1, arbitrary: anyValue }) }),
    anyValue,
  ),
  parent_tool_use_id: field(null),
  error: field(undefined),
});

const user = objectOf({
  type: fc.constant('user'),
  message: fc.oneof(
    objectOf({
      role: field('user'),
      content: fc.oneof(
        fc.array(fc.oneof(objectOf({ type: field('tool_result'), tool_use_id: field('toolu_1'), content: field('out'), is_error: field(false) }), anyValue), { maxLength: 3 }),
        anyValue,
      ),
    }),
    anyValue,
  ),
  tool_use_result: field({ stdout: 'x' }),
  parent_tool_use_id: field(null),
  tool_result_meta: fc.oneof(field(null), fc.array(fc.oneof(objectOf({ id: field('toolu_1'), non_execution_kind: field(null), permission_decision: field('allow') }), anyValue), { maxLength: 2 })),
});

const cases = [
  ['stream_event', StreamEventSchema, streamEvent],
  ['assistant', AssistantMessageSchema, assistant],
  ['user', UserMessageSchema, user],
] as const;

describe('classifyClaudeMessage: the hand-checked hot path gives the schemas’ verdicts', () => {
  for (const [kind, schema, arbitrary] of cases) {
    it(`${kind}: accepted exactly when the schema accepts it, as what the schema returns`, () => {
      let accepted = 0;
      let refused = 0;
      fc.assert(
        fc.property(arbitrary, (value) => {
          const parsed = schema.safeParse(value);
          const classified = classifyClaudeMessage(value);
          if (parsed.success) {
            accepted++;
            expect(classified).toEqual({ kind, msg: parsed.data });
          } else {
            refused++;
            expect(classified.kind).toBe('unknown');
          }
        }),
        { numRuns: RUNS },
      );
      // Both verdicts were exercised (the generator is not stuck on one side).
      expect(accepted).toBeGreaterThan(RUNS / 20);
      expect(refused).toBeGreaterThan(RUNS / 20);
    });
  }
});
