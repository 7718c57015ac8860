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

/**
 * How a template is varied: `field` gives a field's right value or (mutating) sometimes a wrong one
 * (undefined: removed); `orWrong` gives a part or (mutating) sometimes any value in its place.
 */
interface Variation {
  field<T>(right: T): fc.Arbitrary<T | unknown>;
  orWrong(part: fc.Arbitrary<unknown>): fc.Arbitrary<unknown>;
}
const mutating: Variation = {
  field: (right) => fc.oneof({ weight: 3, arbitrary: fc.constant(right) }, { weight: 1, arbitrary: anyValue }),
  orWrong: (part) => fc.oneof(part, anyValue),
};
/** The template as it should be (its arrays still vary): the well-formed messages an agent sends. */
const wellFormed: Variation = {
  field: (right) => fc.constant(right),
  orWrong: (part) => part,
};

/** An object of the template's fields, each maybe replaced, with `undefined` ones left out. */
const objectOf = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc.record(fields).map((o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)));

const streamEvent = ({ field, orWrong }: Variation) =>
  objectOf({
    type: fc.constant('stream_event'),
    event: orWrong(
      objectOf({
        type: field('content_block_delta'),
        index: field(0),
        delta: orWrong(objectOf({ type: field('text_delta'), text: field('hi'), thinking: field(undefined) })),
        content_block: orWrong(objectOf({ type: field('text') })),
        message: orWrong(objectOf({ id: field('msg_1') })),
      }),
    ),
    api_message_id: field('msg_1'),
    parent_tool_use_id: field(null),
    uuid: field('u-1'),
  });

const assistant = ({ field, orWrong }: Variation) => {
  const contentBlock = orWrong(
    fc.oneof(
      objectOf({ type: field('text'), text: field('hello'), thinking: field(undefined), id: field(undefined), name: field(undefined), input: field(undefined) }),
      objectOf({ type: field('tool_use'), id: field('toolu_1'), name: field('Bash'), input: field({ command: 'ls' }) }),
    ),
  );
  return objectOf({
    type: fc.constant('assistant'),
    message: orWrong(objectOf({ id: field('msg_1'), model: field('claude-x'), content: orWrong(fc.array(contentBlock, { maxLength: 3 })) })),
    parent_tool_use_id: field(null),
    error: field(undefined),
  });
};

const user = ({ field, orWrong }: Variation) =>
  objectOf({
    type: fc.constant('user'),
    message: orWrong(
      objectOf({
        role: field('user'),
        content: orWrong(fc.array(orWrong(objectOf({ type: field('tool_result'), tool_use_id: field('toolu_1'), content: field('out'), is_error: field(false) })), { maxLength: 3 })),
      }),
    ),
    tool_use_result: field({ stdout: 'x' }),
    parent_tool_use_id: field(null),
    tool_result_meta: fc.oneof(field(null), fc.array(orWrong(objectOf({ id: field('toolu_1'), non_execution_kind: field(null), permission_decision: field('allow') })), { maxLength: 2 })),
  });

/**
 * A quarter well-formed, the rest mutated: both verdicts come often whatever the seed (mutated
 * alone, an `assistant` was accepted ~5% of the time, and a run with 14 of 300 failed the check below).
 */
const messages = (template: (variation: Variation) => fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 1, arbitrary: template(wellFormed) }, { weight: 3, arbitrary: template(mutating) });

const cases = [
  ['stream_event', StreamEventSchema, messages(streamEvent)],
  ['assistant', AssistantMessageSchema, messages(assistant)],
  ['user', UserMessageSchema, messages(user)],
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
