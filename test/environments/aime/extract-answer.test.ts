import { describe, expect, it } from "vitest";
import { extractAnswer } from "../../../environments/aime/src/extract-answer.ts";
import { scanAnswerMarkers, scanMathSpans, scanProseNumbers } from "../../../environments/aime/src/scan-response.ts";

describe("the response grammar", () => {
  it("reads inline and display math spans; an unclosed $ is currency", () => {
    expect(scanMathSpans("a $x$ b $$y$$ c \\(z\\) d \\[w\\]").map((s) => [s.content, s.display])).toEqual([
      ["x", false],
      ["y", true],
      ["z", false],
      ["w", true],
    ]);
    expect(scanMathSpans("It costs $5 in all.")).toEqual([]);
    expect(scanMathSpans("\\(x\ny\\) and $a\nb$ and \\[p\nq\\]").map((s) => s.content)).toEqual(["p\nq"]);
    expect(scanMathSpans("price \\$5 and \\$6")).toEqual([]);
  });

  it("finds answer markers with and without a colon, never inside 'answered'", () => {
    const starts = (t: string): string[] => scanAnswerMarkers(t).map((m) => t.slice(m.valueStart).trim());
    expect(starts("Answer: 5")).toEqual(["5"]);
    expect(starts("Answer \\[ 9 \\]")).toEqual(["\\[ 9 \\]"]);
    expect(starts("The final answer is $3$.")).toEqual(["$3$."]);
    expect(starts("**Final Answer**\n\\boxed{8}")).toEqual(["\\boxed{8}"]);
    expect(starts("She answered 5 questions.")).toEqual([]);
  });

  it("reads prose numbers outside math, not digits inside words", () => {
    const text = "We get $12$ then 7,425,000 and 2/3 and -5, but not AZ2A or x_3.";
    expect(scanProseNumbers(text, scanMathSpans(text)).map((n) => n.text)).toEqual(["7,425,000", "2/3", "-5"]);
  });

  it("takes markers by recency, then the last math span, then the bare final expression", () => {
    const pick = (t: string): [string, string] | null => {
      const a = extractAnswer(t);
      return a === null ? null : [a.raw, a.source];
    };
    expect(pick("So $a = \\boxed{255}$.\n\nThe final answer is $10,455$.")).toEqual(["10,455", "answer-line"]);
    expect(pick("Answer: 3\n\nChecking: \\boxed{3}")).toEqual(["3", "boxed"]);
    expect(pick("Final Answer: The largest $n$ is 34.")).toEqual(["34", "answer-line"]);
    expect(pick("We compute $2+2$ and get $4$.")).toEqual(["4", "math-span"]);
    expect(pick("Reasoning.\n\n-5 + 10")).toEqual(["-5 + 10", "prose"]);
    expect(pick("**73**")).toEqual(["73", "prose"]);
    expect(pick("We get $n$ = 7.")).toEqual(["7", "prose"]);
    expect(pick("No answer here.")).toBeNull();
  });

  it("groups boxes joined by connectors; 'or' marks alternatives", () => {
    expect(extractAnswer("\\boxed{3} \\quad \\text{and} \\quad \\boxed{5}")).toMatchObject({ group: ["3", "5"], alternatives: false });
    expect(extractAnswer("$x = \\boxed{3}$ and $x = \\boxed{5}$")).toMatchObject({ group: ["3", "5"] });
    expect(extractAnswer("\\boxed{3} or \\boxed{5}")).toMatchObject({ group: ["3", "5"], alternatives: true });
    expect(extractAnswer("\\boxed{3}. Then we also see \\boxed{5}")).toMatchObject({ group: ["5"] });
    expect(extractAnswer("It is $3$ or $4$.")).toMatchObject({ group: ["3", "4"], alternatives: true });
  });

  it("ignores what follows an end-of-turn token and prefers the final part over the thinking", () => {
    expect(extractAnswer("The answer is 42.<|im_end|>\\boxed{48}")?.raw).toBe("42");
    expect(extractAnswer("<think>\\boxed{4}</think>Answer: 5")).toMatchObject({ raw: "5", part: "final" });
    expect(extractAnswer("<think>so \\boxed{4}</think>I stop here.")).toMatchObject({ raw: "4", part: "thinking" });
  });
});
