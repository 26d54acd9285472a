/**
 * Input pieces several tools share.
 *
 * @module
 */
import * as v from "valibot";

/** The largest page size or result cap a tool accepts. */
export const MAX_COUNT = 2000;

/** The schema {@link optionalCount} builds. */
export type OptionalCountSchema = v.OptionalSchema<
  v.SchemaWithPipe<
    readonly [
      v.NumberSchema<undefined>,
      v.IntegerAction<number, undefined>,
      v.MinValueAction<number, 1, undefined>,
      v.MaxValueAction<number, typeof MAX_COUNT, undefined>,
      v.DescriptionAction<number, string>,
    ]
  >,
  undefined
>;

/** An optional whole number from 1 to {@link MAX_COUNT}: a page size or a result cap. */
export function optionalCount(description: string): OptionalCountSchema {
  return v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(MAX_COUNT),
      v.description(description),
    ),
  );
}

/**
 * The message of a string field over `max` characters, for `v.maxLength`:
 * the bound, the length given, and what to do instead. (The field's name
 * leads it when the toolset reports it.)
 */
export function tooLong(max: number, instead: string): (issue: { received: string }) => string {
  return (issue) => `Invalid length: at most ${max} characters, not ${issue.received}; ${instead}`;
}
