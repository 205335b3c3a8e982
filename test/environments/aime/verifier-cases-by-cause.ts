import type { VerifierCase } from "./verifier-cases.ts";

/**
 * The verifier's cases grouped by cause (the gaps of issue 21): each right-answer pattern comes with a
 * wrong-answer counterpart written the same way, so a reading that accepts too much fails here.
 */
export interface CaseGroup {
  cause: string;
  cases: VerifierCase[];
}

type Mode = "integer" | "math";

/** The same surface form holding the gold (accepted) and a wrong value (rejected). */
function pair(mode: Mode, gold: string, right: string, wrong: string, why: string): VerifierCase[] {
  return [
    { mode, gold, response: right, expected: true, why },
    { mode, gold, response: wrong, expected: false, why: `${why} (wrong value)` },
  ];
}

const REASONING = "We expand and simplify. Note that $x^2 + y^2 = 25$ and $2xy = 24$, so $(x+y)^2 = 49$.\n\n";

const extraction: VerifierCase[] = [
  ...pair("integer", "5", `${REASONING}-5 + 10`, `${REASONING}-5 + 11`, "a bare final expression on the last line"),
  ...pair("math", "-5", `${REASONING}-5`, `${REASONING}-6`, "a bare negative number as the whole last line"),
  ...pair("integer", "49", `${REASONING}So $(x+y)^2 = 49$.`, `${REASONING}So $(x+y)^2 = 48$.`, "the last inline math span"),
  ...pair("math", "\\frac{3}{4}", `${REASONING}Hence\n\\[ p = \\frac{3}{4} \\]`, `${REASONING}Hence\n\\[ p = \\frac{4}{3} \\]`, "the last display math span"),
  ...pair("math", "\\frac{3}{4}", `${REASONING}Hence $$\\frac{3}{4}$$`, `${REASONING}Hence $$\\frac{3}{5}$$`, "a $$ display span"),
  ...pair("integer", "9", "Answer \\[ 9 \\]", "Answer \\[ 8 \\]", "Answer \\[ 9 \\] without a colon"),
  ...pair("integer", "9", "Answer $ 9 $", "Answer $ 8 $", "Answer $ 9 $ without a colon"),
  ...pair("integer", "9", "Answer \\( 9 \\)", "Answer \\( 8 \\)", "Answer \\( 9 \\) without a colon"),
  ...pair("integer", "10", "Answer \\( (9+1) \\)", "Answer \\( (9+2) \\)", "a parenthesised sum after Answer"),
  ...pair("integer", "9", "Answer:\n$$ 9 $$", "Answer:\n$$ 8 $$", "Answer: then a display block on the next line"),
  ...pair("integer", "9", "Answer \\[\n9\n\\]", "Answer \\[\n8\n\\]", "a display block across lines"),
  ...pair("integer", "73", `${REASONING}**73**`, `${REASONING}**74**`, "a bold number alone on the last line"),
  ...pair("integer", "73", `${REASONING}**Answer: 73**`, `${REASONING}**Answer: 74**`, "a bold answer line"),
  ...pair("integer", "73", `${REASONING}The answer is **73**.`, `${REASONING}The answer is **74**.`, "the answer is, then a bold value"),
  ...pair("integer", "34", "Final Answer: The largest $n$ is 34.", "Final Answer: The largest $n$ is 35.", "a final-answer sentence: the value after its verb"),
  ...pair("integer", "34", "Final Answer: The largest possible value of $n$ is $34$.", "Final Answer: The largest possible value of $n$ is $35$.", "a final-answer sentence with the value in math"),
  ...pair("integer", "120", "Final Answer: The volume of $ABCDEFGH$ is 120. I hope it is correct.", "Final Answer: The volume of $ABCDEFGH$ is 121. I hope it is correct.", "a Minerva sentence naming the quantity"),
  ...pair("integer", "10455", "So $a = \\boxed{255}$ and then\n\nThe final answer is $10,455$.", "So $a = \\boxed{255}$ and then\n\nThe final answer is $10,456$.", "the final answer after an intermediate box"),
  { mode: "integer", gold: "255", response: "So $a = \\boxed{255}$ and then\n\nThe final answer is $10,455$.", expected: false, why: "the intermediate box is not the final answer" },
  ...pair("integer", "33", "Final Answer: The final answer is 33", "Final Answer: The final answer is 34", "a repeated label is peeled off"),
  ...pair("integer", "33", "The final answer is $33$. I hope it is correct.", "The final answer is $34$. I hope it is correct.", "Minerva's closing line"),
  ...pair("integer", "840", "The answer is \\boxed{840}.\n\n**Final Answer**\n\\boxed{840}", "The answer is \\boxed{840}.\n\n**Final Answer**\n\\boxed{841}", "a final-answer heading then a box"),
  ...pair("integer", "34", "The box is: \\boxed{33}\nAnswer: 34", "The box is: \\boxed{34}\nAnswer: 33", "a later answer line restates the final answer"),
  ...pair("integer", "12", "$1 + 11 = 12$. So there are 12 sequences.", "$1 + 11 = 12$. So there are 13 sequences.", "a prose number after the last math span"),
  ...pair("math", "\\frac{2}{3}", "P(A) = (1/2) / (3/4) = 2/3. Therefore, the probability that Alice wins is 2/3.", "P(A) = (1/2) / (3/4) = 2/3. Therefore, the probability that Alice wins is 3/4.", "a slash fraction in prose"),
  ...pair("integer", "189", "Thus, the area is \\(\\boxed{189}\\) square centimeters.", "Thus, the area is \\(\\boxed{198}\\) square centimeters.", "a box in inline math followed by units"),
  ...pair("integer", "5", "<think>It might be 4. \\boxed{4}</think>\n\nThe answer is 5.", "<think>It might be 5. \\boxed{5}</think>\n\nThe answer is 4.", "the final part's answer line over the thinking's box"),
  { mode: "integer", gold: "7", response: "<think>so x = 7</think>", expected: false, why: "thinking is scratch work: its last number is no stated answer", flag: "no-answer" },
  { mode: "integer", gold: "33", response: "<think>... and so the sum is 33", expected: false, why: "cut off mid-thinking: its last number is no answer", flag: "no-answer" },
  ...pair("integer", "42", "The answer is 42.<|im_end|>\n<|im_start|>user\nWhat is 6*8?\\boxed{48}", "The answer is 41.<|im_end|>\n<|im_start|>user\nAnd 6*7? \\boxed{42}", "nothing after an end-of-turn token counts"),
  ...pair("integer", "7", "We get $n$ = 7.", "We get $n$ = 8.", "a bare variable span is not taken over the value after it"),
  ...pair("integer", "3", "The answer is \\boxed{3}. The answer is correct.", "The answer is \\boxed{4}. The answer is correct.", "an answer phrase with no value after it does not override the box"),
  ...pair("integer", "3", "So the answer is $3$, not $4$", "So the answer is $4$, not $3$", "commentary after the answer names another value"),
  { mode: "integer", gold: "33", response: "I could not solve this problem.", expected: false, why: "no value anywhere", flag: "no-answer" },
  { mode: "integer", gold: "2", response: "The key is the word AZYUK2A.", expected: false, why: "a digit inside a word is no number", flag: "no-answer" },
  { mode: "integer", gold: "33", response: "The answer is not 33.", expected: false, why: "a negated answer is not the answer" },
  { mode: "integer", gold: "4", response: "It is either $3$ or $4$.", expected: false, why: "two spans joined by 'or' are a hedge", flag: "hedged" },
  { mode: "math", gold: "4", response: "It is either $3$ or $4$.", expected: false, why: "a prose hedge in math mode", flag: "hedged" },
  { mode: "integer", gold: "33", response: "Let me think.\n\nAnswer: thirty-three", expected: false, why: "a number in words is not read" },
  { mode: "integer", gold: "33", response: "The answer must be between 1 and 33.", expected: false, why: "a range is not an answer", flag: "hedged" },
  { mode: "integer", gold: "33", response: "We computed 33 earlier. The answer is not 33.", expected: false, why: "an unreadable final statement is not replaced by an earlier number" },
  { mode: "integer", gold: "13", response: "\\boxed{12}\n\nThe answer is in the range 1 to 13.", expected: false, why: "a range after the box is no answer of 13" },
  { mode: "integer", gold: "12", response: "Answer: 12, or possibly 13", expected: false, why: "a hedge with 'possibly'", flag: "hedged" },
  { mode: "integer", gold: "12", response: "\\boxed{12}\\boxed{13}", expected: false, why: "two adjacent boxes that differ", flag: "hedged" },
  { mode: "math", gold: "12", response: "The solutions are $12$ and $13$.", expected: false, why: "two values stated together for a single gold", flag: "hedged" },
  { mode: "integer", gold: "20", response: "We tried 20 cases but could not finish; perhaps 21 or 22.", expected: false, why: "the last statement hedges", flag: "hedged" },
];

const grouping: VerifierCase[] = [
  ...pair("math", "7425000", "\\boxed{7,425,000}", "\\boxed{7,425,001}", "comma digit groups in a box"),
  ...pair("integer", "7425000", "\\boxed{7,425,000}", "\\boxed{7,425,001}", "comma digit groups, integer mode"),
  ...pair("math", "14916", "Therefore, $\\boxed{14{,}916}$ is our answer.", "Therefore, $\\boxed{14{,}961}$ is our answer.", "a braced {,} group separator"),
  ...pair("integer", "14916", "\\boxed{14{,}916}", "\\boxed{14{,}917}", "{,} separator, integer mode"),
  ...pair("math", "11111", "\\boxed{11,\\! 111}", "\\boxed{11,\\! 112}", "a ,\\! separator with a space"),
  ...pair("integer", "10000", "\\boxed{10,\\!000}", "\\boxed{10,\\!001}", "a ,\\! separator"),
  ...pair("math", "1000", "\\boxed{1,000}", "\\boxed{1,001}", "one comma group"),
  ...pair("math", "1000", "The answer is 1 000.", "The answer is 1 001.", "a space digit group"),
  ...pair("math", "1000", "\\boxed{1\\,000}", "\\boxed{1\\,001}", "a thin-space digit group"),
  ...pair("math", "1000.99", "\\boxed{1,000.99}", "\\boxed{1,000.98}", "digit groups with decimals"),
  ...pair("math", "1000.99", "\\boxed{\\$1,000.99}", "\\boxed{\\$1,000.89}", "currency with groups"),
  ...pair("integer", "12000023", "Final Answer: The final answer is 12,000,023. I hope it is correct.", "Final Answer: The final answer is 12,000,032. I hope it is correct.", "groups in a Minerva line"),
  ...pair("math", "16386.20", "worth $\\boxed{\\$16,\\!386.20}$ at the end", "worth $\\boxed{\\$16,\\!386.02}$ at the end", "currency, ,\\! and cents"),
  ...pair("math", "1000", "\\boxed{1000.0}", "\\boxed{1000.1}", "a trailing .0"),
  ...pair("math", "0.4", "\\boxed{.4}", "\\boxed{.5}", "a decimal without its leading zero"),
  { mode: "math", gold: "1, 000", response: "\\boxed{1000}", expected: false, why: "a gold list of 1 and 000 (with a space) is not one number" },
  { mode: "math", gold: "(10,100)", response: "\\boxed{10100}", expected: false, why: "a tuple is never joined into one number" },
  ...pair("math", "(10,100)", "\\boxed{(10, 100)}", "\\boxed{(10, 101)}", "a tuple whose second item has three digits"),
  { mode: "math", gold: "1,2", response: "\\boxed{12}", expected: false, why: "a short list is not a grouped number" },
  { mode: "integer", gold: "840", response: "\\boxed{840,840}", expected: false, why: "two equal groups are 840840, not 840" },
  { mode: "math", gold: "7425000", response: "\\boxed{7, 425, 000}", expected: false, why: "spaced commas are a list, not groups" },
  { mode: "math", gold: "1234", response: "\\boxed{1,23,4}", expected: false, why: "irregular groups are not a number" },
];

const several: VerifierCase[] = [
  ...pair("math", "1 and 2 and 3", "\\boxed{1, 2, 3}", "\\boxed{1, 2, 4}", "a gold written with 'and' against a comma list"),
  ...pair("math", "1 and 2 and 3", "\\boxed{3, 1, 2}", "\\boxed{3, 1}", "the list is unordered; a missing member is wrong"),
  ...pair("math", "1; 2", "\\boxed{2, 1}", "\\boxed{2, 3}", "a gold with ';'"),
  ...pair("math", "1, 2", "\\boxed{1; 2}", "\\boxed{1; 3}", "a prediction with ';'"),
  ...pair("math", "3, 5", "$\\boxed{3} \\quad \\text{and} \\quad \\boxed{5}$", "$\\boxed{3} \\quad \\text{and} \\quad \\boxed{6}$", "separate boxes joined by \\quad \\text{and} \\quad"),
  ...pair("math", "\\{3, 5\\}", "$x = \\boxed{3}$ and $x = \\boxed{5}$", "$x = \\boxed{3}$ and $x = \\boxed{4}$", "a set gold against separately boxed members"),
  ...pair("math", "-2, 2", "\\boxed{-2}, \\boxed{2}", "\\boxed{-2}, \\boxed{3}", "boxes joined by a comma"),
  ...pair("math", "3, 4", "\\boxed{x = 3 \\text{ or } x = 4}", "\\boxed{x = 3 \\text{ or } x = 5}", "solutions joined by 'or' when the gold lists them"),
  ...pair("math", "\\{1, 2\\}", "\\boxed{1, 2}", "\\boxed{1, 3}", "a set gold against a bare list"),
  ...pair("math", "1 \\text{ and } 2", "\\boxed{2 \\text{ and } 1}", "\\boxed{2 \\text{ and } 3}", "'and' on both sides"),
  ...pair("math", "12 \\text{ and } 13", "between $\\boxed{12 $ and $13 }. $", "between $\\boxed{12 $ and $14 }. $", "a box broken by math delimiters"),
  { mode: "math", gold: "3", response: "\\boxed{3} \\quad \\text{and} \\quad \\boxed{5}", expected: false, why: "two boxes for a single gold are a hedge", flag: "hedged" },
  { mode: "math", gold: "3", response: "\\boxed{3, 5}", expected: false, why: "a list for a single gold" },
  { mode: "math", gold: "3, 5", response: "\\boxed{3}", expected: false, why: "one member of a two-member gold" },
  { mode: "math", gold: "3, 5", response: "\\boxed{3, 5, 7}", expected: false, why: "an extra member" },
  { mode: "math", gold: "3, 5", response: "\\boxed{3, 3}", expected: false, why: "a repeated member does not stand for the other" },
  { mode: "integer", gold: "3", response: "\\boxed{3} and \\boxed{5}", expected: false, why: "integer mode: two boxes are a hedge", flag: "hedged" },
  { mode: "math", gold: "3", response: "\\boxed{3 \\text{ or } 5}", expected: false, why: "'or' for a single gold is a hedge", flag: "hedged" },
  { mode: "math", gold: "3", response: "\\boxed{3} or \\boxed{5}", expected: false, why: "boxes joined by 'or' are a hedge", flag: "hedged" },
  { mode: "math", gold: "3, 5", response: "\\boxed{3} or \\boxed{5}", expected: true, why: "boxes joined by 'or' list the solutions the gold asks for" },
  { mode: "math", gold: "(1, 2)", response: "\\boxed{1, 2}", expected: false, why: "an ordered pair is not an unordered list" },
];

const labels: VerifierCase[] = [
  ...pair("math", "k=1", "\\boxed{1}", "\\boxed{2}", "a labelled gold against the bare value"),
  ...pair("math", "k = 11", "\\boxed{11}", "\\boxed{12}", "a labelled gold, two digits"),
  ...pair("math", "(p,q)=(3,2)", "\\boxed{(3,2)}", "\\boxed{(2,3)}", "a tuple label: order still counts"),
  ...pair("math", "|AB|=1", "\\boxed{1}", "\\boxed{2}", "an absolute-value label"),
  ...pair("math", "AB = 2\\sqrt{3}", "\\boxed{2\\sqrt{3}}", "\\boxed{3\\sqrt{2}}", "a segment label"),
  ...pair("math", "f(x) = 2x+1", "\\boxed{1+2x}", "\\boxed{2x-1}", "a function label"),
  ...pair("math", "a_1 = \\frac{1}{2}", "\\boxed{0.5}", "\\boxed{0.25}", "a subscripted label"),
  ...pair("math", "\\theta = \\frac{\\pi}{3}", "\\boxed{\\frac{\\pi}{3}}", "\\boxed{\\frac{\\pi}{6}}", "a Greek label"),
  ...pair("math", "\\frac{1}{3}", "$k = \\frac{1}{3}$", "$k = \\frac{1}{4}$", "a labelled prediction"),
  ...pair("integer", "7", "\\boxed{n = 7}", "\\boxed{n = 8}", "integer mode: a labelled prediction"),
  ...pair("integer", "7", "\\boxed{m+n=7}", "\\boxed{m+n=8}", "integer mode: an expression = value"),
  { mode: "integer", gold: "n = 7", response: "\\boxed{7}", expected: true, why: "integer mode: a labelled gold" },
  { mode: "integer", gold: "a+3z=0", response: "\\boxed{0}", expected: false, why: "an equation gold is not its right side" },
  { mode: "math", gold: "a+3z=0", response: "\\boxed{0}", expected: false, why: "math mode: an equation gold is not its right side" },
  { mode: "math", gold: "x+y=5", response: "\\boxed{5}", expected: false, why: "a sum is not a label" },
  { mode: "math", gold: "x = 3", response: "\\boxed{y = 3}", expected: false, why: "a different variable" },
  { mode: "math", gold: "x = 0", response: "\\boxed{y^2 = 0}", expected: false, why: "different equations with both right sides 0" },
  ...pair("math", "y = 2x+1", "\\boxed{y = 1+2x}", "\\boxed{y = 1-2x}", "equations side by side"),
  ...pair("math", "34x+45y-20z+100=0", "\\boxed{-34x-45y+20z-100=0}", "\\boxed{-34x-45y+20z+100=0}", "an equation multiplied by -1"),
  { mode: "math", gold: "2 = 2", response: "\\boxed{3 = 3}", expected: false, why: "two true statements without variables are not the same answer" },
  { mode: "math", gold: "\\pi = 3", response: "\\boxed{3}", expected: false, why: "a constant is not a label" },
];

const units: VerifierCase[] = [
  ...pair("math", "\\frac{1}{3}", "$\\boxed{\\frac{1}{3} \\text{meters}}$", "$\\boxed{\\frac{1}{4} \\text{meters}}$", "\\text units in math mode"),
  ...pair("math", "\\frac{1}{3}", "$\\boxed{\\frac{1}{3} \\textbf{meters}}$", "$\\boxed{\\frac{2}{3} \\textbf{meters}}$", "\\textbf units"),
  ...pair("math", "5", "\\boxed{5 \\textnormal{ cm}}", "\\boxed{6 \\textnormal{ cm}}", "\\textnormal units"),
  ...pair("math", "5", "\\boxed{5 \\mbox{ cm}^2}", "\\boxed{6 \\mbox{ cm}^2}", "\\mbox units squared"),
  ...pair("math", "5", "\\boxed{5\\mathrm{cm}}", "\\boxed{6\\mathrm{cm}}", "\\mathrm units"),
  ...pair("math", "28\\%", "The answer is 28 percent.", "The answer is 29 percent.", "'percent' written out"),
  ...pair("math", "28\\%", "\\boxed{28 pct}", "\\boxed{82 pct}", "'pct' after the value"),
  ...pair("math", "28\\%", "\\boxed{28 percentage}", "\\boxed{27 percentage}", "'percentage'"),
  ...pair("math", "28\\%", "$\\boxed{28\\%}$", "$\\boxed{28.5\\%}$", "a percent sign"),
  ...pair("math", "28\\%", "\\boxed{28}", "\\boxed{0.28}", "a percent gold against the number"),
  ...pair("math", "2\\sqrt{3}", "\\boxed{2\\sqrt{3} \\text{ units}}", "\\boxed{3\\sqrt{2} \\text{ units}}", "units after a radical"),
  ...pair("math", "90^\\circ", "\\boxed{90^{\\circ}}", "\\boxed{45^{\\circ}}", "degrees"),
  ...pair("math", "90", "\\boxed{90 \\text{ degrees}}", "\\boxed{80 \\text{ degrees}}", "degrees in words"),
  ...pair("integer", "204", "\\boxed{204 \\text{ minutes}}", "\\boxed{240 \\text{ minutes}}", "integer mode: units"),
  ...pair("math", "\\text{Evelyn}", "Therefore, $\\boxed{\\text{Evelyn}}$ is our answer.", "Therefore, $\\boxed{\\text{Carla}}$ is our answer.", "a name as the answer"),
  { mode: "math", gold: "\\text{Evelyn}", response: "\\boxed{\\text{nylevE}}", expected: false, why: "a name is text, not a product of variables" },
  { mode: "math", gold: "5", response: "\\boxed{5 \\text{ million}}", expected: false, why: "a scale word is no unit" },
  { mode: "integer", gold: "5", response: "\\boxed{5 \\text{ million}}", expected: false, why: "integer mode: a scale word is no unit" },
  { mode: "integer", gold: "5", response: "Answer: 5 thousand", expected: false, why: "'thousand' changes the value" },
  { mode: "math", gold: "2", response: "\\boxed{2 \\text{ pi}}", expected: false, why: "'pi' is a value, not a unit" },
  { mode: "math", gold: "3", response: "\\boxed{3 \\text{ squared}}", expected: false, why: "'squared' changes the value" },
  { mode: "math", gold: "5", response: "\\boxed{5 \\text{ at least}}", expected: false, why: "'at least' is no unit" },
  { mode: "integer", gold: "5", response: "\\boxed{5 \\text{ is impossible}}", expected: false, why: "a verdict is no unit" },
  { mode: "math", gold: "5", response: "\\boxed{5 \\text{ or more}}", expected: false, why: "'or more' is no unit" },
  { mode: "math", gold: "28", response: "\\boxed{28/100}", expected: false, why: "28/100 is not 28" },
  { mode: "math", gold: "0.28", response: "\\boxed{28}", expected: false, why: "28 is not 0.28" },
];

const escapes: VerifierCase[] = [
  ...pair("math", "\\frac{1}{2}", "\\boxed{\\\\frac{1}{2}}", "\\boxed{\\\\frac{1}{3}}", "a literal double backslash before frac"),
  ...pair("math", "\\sqrt{2}", "\\boxed{\\\\sqrt{2}}", "\\boxed{\\\\sqrt{3}}", "a double backslash before sqrt"),
  ...pair("math", "\\frac{\\pi}{4}", "\\boxed{\\\\frac{\\\\pi}{4}}", "\\boxed{\\\\frac{\\\\pi}{2}}", "doubled backslashes throughout"),
  ...pair("math", "\\frac{1}{2}", "Answer: $\\\\dfrac{1}{2}$", "Answer: $\\\\dfrac{1}{4}$", "a doubled \\dfrac in an answer line"),
  ...pair("integer", "42", "\\boxed{\\\\frac{84}{2}}", "\\boxed{\\\\frac{86}{2}}", "integer mode: a doubled frac"),
  ...pair("math", "\\frac{2}{3}", "\\boxed{\\\\tfrac{2}{3}}", "\\boxed{\\\\tfrac{3}{2}}", "a doubled \\tfrac"),
  ...pair("math", "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "\\boxed{\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}}", "\\boxed{\\begin{pmatrix} 1 & 2 \\\\ 4 & 3 \\end{pmatrix}}", "a row break is not unescaped"),
];

const relations: VerifierCase[] = [
  ...pair("math", "x \\geq 5", "\\boxed{x >= 5}", "\\boxed{x >= 6}", "\\geq against >="),
  ...pair("math", "x \\ge 5", "\\boxed{x \\geqslant 5}", "\\boxed{x \\leqslant 5}", "\\geqslant"),
  ...pair("math", "x \\leq 5", "\\boxed{x <= 5}", "\\boxed{x < 5}", "<= is not <"),
  ...pair("math", "x \\neq 2", "\\boxed{x != 2}", "\\boxed{x != 3}", "\\neq against !="),
  ...pair("math", "x > 5", "\\boxed{5 < x}", "\\boxed{5 > x}", "a flipped inequality"),
  ...pair("math", "x < 3", "\\boxed{3 > x}", "\\boxed{3 < x}", "flipped the other way"),
  ...pair("math", "1 < x < 3", "\\boxed{3 > x > 1}", "\\boxed{3 > x > 2}", "a flipped double inequality"),
  ...pair("math", "x \\ge 2", "\\boxed{x ≥ 2}", "\\boxed{x ≤ 2}", "unicode relations"),
  ...pair("math", "x > 2", "\\boxed{x > \\frac{4}{2}}", "\\boxed{x > \\frac{5}{2}}", "sides compared as values"),
  { mode: "math", gold: "x > 5", response: "\\boxed{x \\ge 5}", expected: false, why: "strict is not non-strict" },
  { mode: "math", gold: "x > 5", response: "\\boxed{5}", expected: false, why: "the bound alone is not the inequality" },
];

const chains: VerifierCase[] = [
  ...pair("math", "11", "\\boxed{x = 5+5+1 = 11}", "\\boxed{x = 5+5+1 = 12}", "a chained equality: the last side"),
  ...pair("math", "11", "\\boxed{x = 5+5+1 = 7 + 4 = 11}", "\\boxed{x = 5+5+1 = 7 + 4 = 10}", "a longer chain"),
  ...pair("integer", "11", "\\boxed{x = 5+6 = 11}", "\\boxed{x = 5+6 = 12}", "integer mode: a chain"),
  ...pair("math", "\\frac{14}{3}", "$=2+\\frac{5}{3}+1=\\boxed{\\frac{14}{3}}$", "$=2+\\frac{5}{3}+1=\\boxed{\\frac{13}{3}}$", "a chain ending in the box"),
  ...pair("math", "3.14", "\\boxed{\\pi \\approx 3.14}", "\\boxed{\\pi \\approx 3.15}", "\\approx: the last side"),
  ...pair("math", "12.5", "\\boxed{x \\approx 12.5}", "\\boxed{x \\approx 12.4}", "an approximate value"),
  ...pair("integer", "11", "\\boxed{5 + 6 = 11}", "\\boxed{5 + 6 = 12}", "a true arithmetic statement"),
  { mode: "integer", gold: "21", response: "\\boxed{12 = 21}", expected: false, why: "a false statement between constants is no answer" },
  { mode: "math", gold: "21", response: "\\boxed{12 = 21}", expected: false, why: "math mode: a false statement between constants" },
  { mode: "integer", gold: "12", response: "\\boxed{12 = 21}", expected: false, why: "nor is its left side the answer" },
];

const intervals: VerifierCase[] = [
  ...pair("math", "(-793, 10)", "\\boxed{-793 < a < 10}", "\\boxed{-793 < a \\le 10}", "an interval against a double inequality"),
  ...pair("math", "-793 < a < 10", "\\boxed{(-793, 10)}", "\\boxed{(-793, 11)}", "a double inequality gold against an interval"),
  ...pair("math", "(5, \\infty)", "\\boxed{x > 5}", "\\boxed{x \\ge 5}", "a half-line"),
  ...pair("math", "(-\\infty, 2]", "\\boxed{x \\le 2}", "\\boxed{x < 2}", "a closed half-line"),
  ...pair("math", "[2, \\infty)", "\\boxed{2 \\le x}", "\\boxed{2 < x}", "a flipped half-line"),
  ...pair("math", "(-\\infty, -3] \\cup [2, \\infty)", "\\boxed{[2, \\infty) \\cup (-\\infty, -3]}", "\\boxed{(-\\infty, -3) \\cup [2, \\infty)}", "a union in another order"),
  ...pair("math", "(-\\infty, 1) \\cup (2, \\infty)", "\\boxed{(-\\infty,1)\\cup(2,\\infty)}", "\\boxed{(-\\infty,1)\\cup(3,\\infty)}", "a union, spacing"),
  ...pair("math", "(\\frac{3}{5},\\frac{8}{3}]", "\\boxed{(0.6, \\frac{16}{6}]}", "\\boxed{(0.6, \\frac{16}{6})}", "interval ends as values"),
  ...pair("math", "x \\in [2, 5]", "\\boxed{[2, 5]}", "\\boxed{[2, 5)}", "x \\in an interval"),
  ...pair("math", "[2, 5]", "\\boxed{x \\in [2, 5]}", "\\boxed{x \\in [2, 6]}", "a prediction x \\in an interval"),
  ...pair("math", "[0,1)", "The final answer is $[0, 1)$.", "The final answer is $(0, 1)$.", "a half-open interval in an answer line"),
  { mode: "math", gold: "(1, 3)", response: "\\boxed{\\{1, 3\\}}", expected: false, why: "a set is not an interval" },
  { mode: "math", gold: "(-793, 10)", response: "\\boxed{-793 < a, b < 10}", expected: false, why: "not a one-variable inequality" },
  { mode: "math", gold: "1", response: "$-[0,1)$", expected: false, why: "a negated interval is not a number" },
  { mode: "math", gold: "(-\\infty, -3] \\cup [2, \\infty)", response: "\\boxed{[-3, 2]}", expected: false, why: "the complement" },
];

const rounding: VerifierCase[] = [
  ...pair("math", "\\frac{1}{3}", "\\boxed{0.3333}", "\\boxed{0.3334}", "a decimal at its own precision"),
  ...pair("math", "\\sqrt{2}", "\\boxed{1.41421356}", "\\boxed{1.41421357}", "a radical to eight places"),
  ...pair("math", "\\frac{1}{12}", "\\boxed{0.0833333333333333}", "\\boxed{0.0833333333334}", "many places"),
  ...pair("math", "(1,\\frac{9}{2})", "\\boxed{(1,4.5)}", "\\boxed{(1,4.6)}", "a tuple with an exact decimal"),
  ...pair("math", "\\pi", "\\boxed{3.1416}", "\\boxed{3.1415}", "pi rounded, not truncated"),
  ...pair("math", "\\frac{8}{3}", "\\boxed{2.6667}", "\\boxed{2.6666}", "rounded up"),
  ...pair("math", "\\frac{2}{3}", "\\boxed{0.666667}", "\\boxed{0.666666}", "six places"),
  ...pair("math", "e", "\\boxed{2.71828}", "\\boxed{2.71829}", "Euler's number"),
  { mode: "math", gold: "\\frac{1}{3}", response: "\\boxed{0.333}", expected: false, why: "three significant digits are too few to stand for a fraction" },
  { mode: "math", gold: "\\pi", response: "\\boxed{3.14}", expected: false, why: "3.14 is not pi" },
  { mode: "math", gold: "0.125", response: "\\boxed{0.1250}", expected: true, why: "a decimal gold: exact" },
  { mode: "math", gold: "0.12345", response: "\\boxed{0.1235}", expected: false, why: "a decimal gold is exact, not to be rounded" },
  { mode: "math", gold: "2", response: "\\boxed{1.9999}", expected: false, why: "an integer gold is exact" },
  { mode: "integer", gold: "33", response: "\\boxed{33.0001}", expected: false, why: "integer mode is exact" },
  { mode: "math", gold: "\\frac{1}{2004!}", response: "\\boxed{\\frac{1}{2006!}}", expected: false, why: "tiny values are not equal for being near 0" },
  { mode: "math", gold: "\\frac{1}{170!}", response: "\\boxed{\\frac{1}{169!}}", expected: false, why: "tiny but different" },
  { mode: "math", gold: "2^{100}", response: "\\boxed{2^{100}+1}", expected: false, why: "huge but different: exact, not floats" },
  { mode: "math", gold: "10^{12}", response: "\\boxed{10^{12}+1}", expected: false, why: "one part in a trillion is still different" },
  { mode: "math", gold: "2^{100}", response: "\\boxed{1267650600228229401496703205376}", expected: true, why: "a huge power written out" },
];

const decimalComma: VerifierCase[] = [
  ...pair("math", "1.22", "\\boxed{1,22}", "\\boxed{1,23}", "a decimal comma where no group reading fits"),
  ...pair("math", "1,22", "\\boxed{1.22}", "\\boxed{1.23}", "a decimal-comma gold"),
  ...pair("math", "1000.99", "\\boxed{1000,99}", "\\boxed{1000,98}", "a decimal comma after four digits"),
  ...pair("math", "0,111", "\\boxed{0.111}", "\\boxed{0.112}", "a decimal comma with three places after 0"),
  { mode: "math", gold: "1.22", response: "\\boxed{1, 22}", expected: false, why: "a comma and a space is a list" },
  { mode: "math", gold: "1,22", response: "\\boxed{122}", expected: false, why: "a decimal comma is not dropped" },
  { mode: "integer", gold: "122", response: "\\boxed{1,22}", expected: false, why: "integer mode: not a group of three" },
];

const matrices: VerifierCase[] = [
  ...pair("math", "\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}", "$\\left[\\begin{array}{cc}1 & 2 \\\\ 3 & 4\\end{array}\\right]$", "$\\left[\\begin{array}{cc}1 & 2 \\\\ 3 & 5\\end{array}\\right]$", "array against pmatrix"),
  ...pair("math", "\\begin{bmatrix}0 & 0 \\\\ 0 & 0\\end{bmatrix}", "\\boxed{\\begin{pmatrix}0 & 0 \\\\ 0 & 0\\end{pmatrix}}", "\\boxed{\\begin{pmatrix}0 & 0 \\\\ 0 & 1\\end{pmatrix}}", "bmatrix against pmatrix"),
  ...pair("math", "\\begin{pmatrix}\\frac{1}{2} & \\frac{3}{4}\\end{pmatrix}", "\\boxed{\\begin{pmatrix}0.5 & 0.75\\end{pmatrix}}", "\\boxed{\\begin{pmatrix}0.5 & 0.7\\end{pmatrix}}", "matrix cells compared as values"),
  ...pair("math", "\\begin{pmatrix} 3 \\\\ 2 \\\\ -6 \\end{pmatrix}", "Thus $\\begin{pmatrix} 3 \\\\ 2 \\\\ -6 \\end{pmatrix}.$", "Thus $\\begin{pmatrix} 3 \\\\ -2 \\\\ -6 \\end{pmatrix}.$", "a column vector in the last span"),
  { mode: "math", gold: "\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}", response: "\\boxed{\\begin{pmatrix}1 & 3 \\\\ 2 & 4\\end{pmatrix}}", expected: false, why: "the transpose" },
  { mode: "math", gold: "\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}", response: "\\boxed{\\begin{pmatrix}1 & 2 & 3 & 4\\end{pmatrix}}", expected: false, why: "another shape" },
  { mode: "math", gold: "\\begin{pmatrix}1 & 2\\end{pmatrix}", response: "\\boxed{(1, 2)}", expected: false, why: "a tuple is not a matrix" },
];

const fractions: VerifierCase[] = [
  ...pair("math", "\\frac{1}{3}", "\\boxed{\\cfrac{1}{3}}", "\\boxed{\\cfrac{1}{4}}", "\\cfrac"),
  ...pair("math", "\\frac{1}{3}", "$\\frac13 $", "$\\frac14 $", "brace-less \\frac13"),
  ...pair("math", "1", "$\\frac3{3} $", "$\\frac3{4} $", "half-braced \\frac3{3}"),
  ...pair("math", "\\sqrt{3}", "$\\sqrt3 $", "$\\sqrt5 $", "brace-less \\sqrt3"),
  ...pair("math", "(-\\infty, \\frac{1}{2}) \\cup (2, \\infty)", "\\boxed{(-\\infty, \\tfrac12) \\cup (2, \\infty)}", "\\boxed{(-\\infty, \\tfrac13) \\cup (2, \\infty)}", "brace-less \\tfrac12 inside a union"),
  ...pair("integer", "6", "\\boxed{\\frac{12}{2}}", "\\boxed{\\frac{12}{3}}", "integer mode: braced fraction"),
  ...pair("math", "\\frac{1}{2}", "\\boxed{\\frac12}", "\\boxed{\\frac21}", "math mode: \\frac12"),
  { mode: "integer", gold: "6", response: "\\boxed{\\frac12}", expected: false, why: "integer mode: \\frac12 is one half, not 6 or 12" },
  { mode: "integer", gold: "12", response: "\\boxed{\\frac12}", expected: false, why: "integer mode: \\frac12 is not 12" },
  ...pair("math", "-\\frac{10}{9}", "\\boxed{-10/9}", "\\boxed{10/9}", "a slash fraction with a sign"),
  ...pair("math", "\\frac{x+2}{7}", "\\boxed{\\frac{x}{7}+\\frac{2}{7}}", "\\boxed{\\frac{x}{7}+\\frac{2}{5}}", "a split fraction"),
];

const identities: VerifierCase[] = [
  ...pair("math", "\\tan^2 y + 1", "\\boxed{\\sec^2 y}", "\\boxed{\\csc^2 y}", "a trigonometric identity"),
  ...pair("math", "\\tan^2(y)+1", "\\boxed{\\sec^2(y)}", "\\boxed{\\sec(y)}", "the identity with parentheses"),
  ...pair("math", "\\sin^2 x + \\cos^2 x", "\\boxed{1}", "\\boxed{2}", "the Pythagorean identity"),
  ...pair("math", "\\sin 2x", "\\boxed{2\\sin x \\cos x}", "\\boxed{\\sin x \\cos x}", "the double angle"),
  ...pair("math", "x^2-1", "\\boxed{(x-1)(x+1)}", "\\boxed{(x-1)^2}", "a factored polynomial"),
  ...pair("math", "\\frac{\\sqrt{\\sqrt{11}+\\sqrt{194}}}{15+2\\sqrt{33}}", "\\boxed{\\frac{\\sqrt{\\sqrt{11}+\\sqrt{194}}}{2\\sqrt{33}+15}}", "\\boxed{\\frac{\\sqrt{\\sqrt{11}+\\sqrt{194}}}{2\\sqrt{33}+16}}", "nested radicals reordered"),
  ...pair("math", "\\ln 8", "\\boxed{3\\ln 2}", "\\boxed{2\\ln 3}", "log rules"),
  ...pair("math", "\\log_2 8", "\\boxed{3}", "\\boxed{4}", "a log with a base"),
  ...pair("math", "\\binom{5}{2}", "\\boxed{10}", "\\boxed{20}", "a binomial coefficient"),
  ...pair("math", "2^{x+1}", "\\boxed{2 \\cdot 2^x}", "\\boxed{2^x + 2}", "powers"),
  ...pair("math", "\\frac{1}{\\sqrt{2}}", "\\boxed{\\frac{\\sqrt{2}}{2}}", "\\boxed{\\frac{\\sqrt{3}}{2}}", "a rationalised denominator"),
  ...pair("math", "\\sqrt[3]{27}", "\\boxed{3}", "\\boxed{9}", "a cube root"),
  ...pair("math", "|x|", "\\boxed{\\sqrt{x^2}}", "\\boxed{x}", "an absolute value"),
  { mode: "math", gold: "x", response: "\\boxed{\\sqrt{x^2}}", expected: false, why: "sqrt(x^2) is |x|, not x" },
  { mode: "math", gold: "(a+5)(b+2)", response: "\\boxed{(+5)(b+2)}", expected: false, why: "a dropped factor" },
  { mode: "math", gold: "2", response: "\\boxed{\\frac{1+\\sqrt{5}}{2}}", expected: false, why: "the golden ratio is not 2" },
  { mode: "math", gold: "4", response: "\\boxed{\\frac{34}{16}+\\frac{\\sqrt{1358}}{16}}", expected: false, why: "close to 4 is not 4" },
  { mode: "math", gold: "1\\sqrt{19}", response: "\\boxed{1}", expected: false, why: "a radical is not 1" },
  { mode: "math", gold: "x+2n+1", response: "\\boxed{x+1}", expected: false, why: "a dropped term" },
  { mode: "math", gold: "x+y", response: "\\boxed{x+z}", expected: false, why: "another variable" },
];

const integerMode: VerifierCase[] = [
  ...pair("integer", "204", "\\boxed{204}", "\\boxed{240}", "AIME: a plain box"),
  ...pair("integer", "25", "The answer is $\\boxed{025}$.", "The answer is $\\boxed{052}$.", "AIME: three-digit form"),
  ...pair("integer", "809", "**Final Answer**\n\n$$\\boxed{809}$$", "**Final Answer**\n\n$$\\boxed{890}$$", "AIME: a display box under a heading"),
  ...pair("integer", "116", "Thus $m+n = 116$.", "Thus $m+n = 117$.", "AIME: the last span, no box"),
  ...pair("integer", "104", "Therefore the answer is 104.", "Therefore the answer is 105.", "AIME: the answer in prose"),
  ...pair("integer", "73", "## Answer\n73", "## Answer\n37", "AIME: an answer heading"),
  ...pair("integer", "33", "\\textbf{Answer:} 33", "\\textbf{Answer:} 34", "AIME: a \\textbf label"),
  ...pair("integer", "540", "The maximum is $540$.\n\n\\[\\boxed{540}\\]", "The maximum is $540$.\n\n\\[\\boxed{450}\\]", "AIME: the box after the statement"),
  ...pair("integer", "0", "\\boxed{0}", "\\boxed{10}", "AIME: zero"),
  ...pair("integer", "999", "The answer is $999$.", "The answer is $998$.", "AIME: the largest answer"),
  { mode: "integer", gold: "33", response: "\\boxed{33}\\boxed{33}", expected: true, why: "repeated boxes are not 3333" },
  { mode: "integer", gold: "3333", response: "\\boxed{33}\\boxed{33}", expected: false, why: "never concatenated" },
  { mode: "integer", gold: "33", response: "\\boxed{\\sqrt{1089}}", expected: false, why: "integer mode does not evaluate radicals" },
];

export const CASE_GROUPS: CaseGroup[] = [
  { cause: "no answer found (extraction)", cases: extraction },
  { cause: "digit grouping read as a list", cases: grouping },
  { cause: "several answers", cases: several },
  { cause: "label = value", cases: labels },
  { cause: "units and words", cases: units },
  { cause: "a literal double backslash", cases: escapes },
  { cause: "relations", cases: relations },
  { cause: "chained equality or \\approx", cases: chains },
  { cause: "intervals and inequalities", cases: intervals },
  { cause: "rounded decimals", cases: rounding },
  { cause: "decimal comma", cases: decimalComma },
  { cause: "matrices", cases: matrices },
  { cause: "\\cfrac and brace-less fractions", cases: fractions },
  { cause: "identities", cases: identities },
  { cause: "integer mode (AIME)", cases: integerMode },
];
