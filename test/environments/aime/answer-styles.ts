/** Ways real model outputs write a correct final answer `a` (an integer string), each labelled. */
export function correctStyles(a: string): Array<[string, string]> {
  const n = Number(a);
  return [
    ["boxed", `So the answer is \\boxed{${a}}.`],
    ["boxed in $", `Hence $\\boxed{${a}}$`],
    ["fbox", `\\fbox{${a}}`],
    ["three digits", `\\boxed{${a.padStart(3, "0")}}`],
    ["leading zero", `\\boxed{0${a}}`],
    ["text", `\\boxed{\\text{${a}}}`],
    ["bold answer line", `Reasoning.\n**Answer:** **${a}**`],
    ["answer line", `Reasoning.\nAnswer: ${a}`],
    ["answer line with period", `Reasoning.\nAnswer: $${a}$.`],
    ["final answer is", `Reasoning.\nThe final answer is $${a}$. I hope it is correct.`],
    ["exact fraction", `\\boxed{\\frac{${2 * n}}{2}}`],
    ["variable", `\\boxed{x = ${a}}`],
    ["repeated boxes", `\\boxed{${a}}\\boxed{${a}}`],
    ["thinking wrong, final right", `<think>maybe \\boxed{${n + 1}}</think>\\boxed{${a}}`],
    ["corrected", `First \\boxed{${n + 1}}.\n\nNo wait: \\boxed{${a}}`],
    ["prose", `I believe it is ${a}.`],
    ["last math span", `Thus $m + n = ${a}$.`],
    ["bold alone", `Reasoning.\n\n**${a}**`],
    ["final answer sentence", `Final Answer: The requested number is ${a}.`],
    ["answer then display", `Answer \\[ ${a} \\]`],
  ];
}

/** Ways to be wrong about `a`: a different value, a hedge, no answer, the right value only in the overridden thinking. */
export function wrongStyles(a: string): Array<[string, string]> {
  const n = Number(a);
  const other = String(n === 999 ? 998 : n + 1);
  return [
    ["other value", `\\boxed{${other}}`],
    ["hedge", `\\boxed{${a}} or \\boxed{${other}}`],
    ["hedge in one box", `\\boxed{${a}, ${other}}`],
    ["thinking right, final wrong", `<think>\\boxed{${a}}</think>\\boxed{${other}}`],
    ["no answer", "I could not finish the computation."],
    ["other value in prose", `I believe it is ${other}.`],
    ["concatenated", `\\boxed{${a}${a}}`],
    ["tenfold", `\\boxed{${n * 10 + 1}}`],
  ];
}
