import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

/**
 * The verifier's case tables, kept as data in `fixtures/`: (gold, model response, expected) with the reason
 * for each.
 * - `verifier-cases.json`: integer cases (AIME-style) by what they exercise (plain boxes, leading zeros,
 *   bold lines, hedges, thinking parts, junk ...), then `math` cases of the general equivalence mode.
 * - `verifier-cases-by-cause.json`: the cases grouped by cause (the gaps of issue 21). Each right-answer
 *   pattern comes with a wrong-answer counterpart written the same way (a `right`/`wrong` row), so a
 *   reading that accepts too much fails here.
 * A row is checked as it is read: a malformed one throws, naming its file and place.
 */
export interface VerifierCase {
  gold: string;
  response: string;
  expected: boolean;
  why: string;
  mode?: "integer" | "math";
  /** A flag the verdict must carry. */
  flag?: string;
}

export interface CaseGroup {
  cause: string;
  cases: VerifierCase[];
}

const Mode = z.enum(["integer", "math"]);
const Why = z.string().min(6);
/** A response as text, or as pieces joined, `{ repeat, times }` standing for a long run of one string. */
const Text = z.union([
  z.string(),
  z.array(z.union([z.string(), z.strictObject({ repeat: z.string().min(1), times: z.number().int().positive() })])).min(1),
]);
/** One case; `boxed: v` is the file's answer sentence around v, in place of a `response`. */
const Single = z
  .strictObject({
    mode: Mode.optional(),
    gold: z.string(),
    response: Text.optional(),
    boxed: z.string().optional(),
    expected: z.boolean(),
    why: Why,
    flag: z.string().min(1).optional(),
  })
  .refine((c) => (c.response === undefined) !== (c.boxed === undefined), "a case has a response or a boxed value, not both");
/** Two cases in one surface form: `right` accepted, `wrong` rejected; `reasoning` puts the file's paragraph before both. */
const Pair = z.strictObject({ mode: Mode, gold: z.string(), reasoning: z.literal(true).optional(), right: z.string(), wrong: z.string(), why: Why });
/** A section's rows, each checked by `expand` against the shape it is (a pair has `right`), so an error names that shape's fields. */
const Rows = z.array(z.record(z.string(), z.unknown())).min(1);
const Section = z.strictObject({ note: z.string().min(1), cases: Rows });

const TableFile = z.strictObject({
  about: z.string(),
  answerSentence: z.strictObject({ before: z.string(), after: z.string() }),
  integer: z.array(Section).min(1),
  math: z.array(Section).min(1),
});
const ByCauseFile = z.strictObject({
  about: z.string(),
  reasoning: z.string().min(1),
  groups: z.array(z.strictObject({ cause: z.string().min(1), cases: Rows })).min(1),
});

function fixturePath(name: string): string {
  return join(import.meta.dirname, "fixtures", name);
}

function check<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new Error(`${where} is malformed:\n${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

interface Wrapping {
  answerSentence?: { before: string; after: string };
  reasoning?: string;
}

/** A section's rows as cases; `where` names the file and section in an error. */
function expand(rows: readonly Record<string, unknown>[], wrap: Wrapping, where: string): VerifierCase[] {
  return rows.flatMap((raw, i): VerifierCase[] => {
    const place = `${where}.cases[${i}]`;
    if ("right" in raw) {
      const row = check(Pair, raw, `${place} (a right/wrong pair)`);
      const { mode, gold, why } = row;
      const before = row.reasoning ? wrap.reasoning : "";
      if (before === undefined) throw new Error(`"${why}": reasoning: true in a file without a reasoning paragraph`);
      return [
        { mode, gold, response: `${before}${row.right}`, expected: true, why },
        { mode, gold, response: `${before}${row.wrong}`, expected: false, why: `${why} (wrong value)` },
      ];
    }
    const row = check(Single, raw, `${place} (a case)`);
    let response: string;
    if (row.boxed !== undefined) {
      if (wrap.answerSentence === undefined) throw new Error(`"${row.why}": a boxed row in a file without an answer sentence`);
      response = `${wrap.answerSentence.before}${row.boxed}${wrap.answerSentence.after}`;
    } else {
      const text = row.response!;
      response = typeof text === "string" ? text : text.map((p) => (typeof p === "string" ? p : p.repeat.repeat(p.times))).join("");
    }
    return [
      {
        ...(row.mode === undefined ? {} : { mode: row.mode }),
        gold: row.gold,
        response,
        expected: row.expected,
        why: row.why,
        ...(row.flag === undefined ? {} : { flag: row.flag }),
      },
    ];
  });
}

const TABLE = fixturePath("verifier-cases.json");
const BY_CAUSE = fixturePath("verifier-cases-by-cause.json");
const table = check(TableFile, JSON.parse(readFileSync(TABLE, "utf8")), TABLE);
const byCause = check(ByCauseFile, JSON.parse(readFileSync(BY_CAUSE, "utf8")), BY_CAUSE);

export const INTEGER_CASES: VerifierCase[] = table.integer.flatMap((s, i) => expand(s.cases, table, `${TABLE}: integer[${i}]`));
export const MATH_CASES: VerifierCase[] = table.math.flatMap((s, i) => expand(s.cases, table, `${TABLE}: math[${i}]`));
export const CASE_GROUPS: CaseGroup[] = byCause.groups.map((g, i) => ({
  cause: g.cause,
  cases: expand(g.cases, byCause, `${BY_CAUSE}: groups[${i}] (${g.cause})`),
}));
