/**
 * Actions an LLM may write that a plugin's author may not expect, for the conformance suite's `fuzz`
 * check: empty, whitespace, huge, unicode, JSON-looking, markup and control characters, then seeded
 * random text. Deterministic from the seed, so a failure replays.
 */
import { createRng } from "../scheduler/rng.ts";

const ADVERSARIAL = [
  "",
  " \n\t ",
  "x".repeat(256 * 1024),
  "🙃 ﷽ नमस्ते 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u202Eevil\u202C e\u0301\u0301\u0301",
  '{"answer": 42, "action": "__proto__"}',
  '[1, 2, {"a": null',
  "null",
  "\\boxed{} $(rm -rf /) `uname -a` ; ls | cat && echo $HOME",
  "<script>alert(1)</script><|im_end|><|endoftext|>",
  "\u0000\u0001\u0007\u001b[31m\uFFFD\uD800",
  "-1e309 NaN Infinity 0x7fffffff",
  "constructor prototype __proto__ toString hasOwnProperty",
];

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 .,:;!?-+*/=()[]{}<>\"'\\\n\té😀中";

/** The `n`-th action of a fuzz run: the adversarial list first, then random text, in a seeded order. */
export function createFuzzActions(seed: number): () => string {
  const rng = createRng(seed);
  let n = 0;
  return () => {
    const i = n++;
    if (i < ADVERSARIAL.length) return ADVERSARIAL[i] as string;
    const chars = [...ALPHABET];
    const length = Math.floor(rng() * 64);
    return Array.from({ length }, () => chars[Math.floor(rng() * chars.length)]).join("");
  };
}

export const ADVERSARIAL_COUNT = ADVERSARIAL.length;
