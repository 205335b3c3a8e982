import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import ivm from "isolated-vm";
import { prepare } from "../environments/aime/prepare/index.ts";
import { verifyAnswer } from "../environments/aime/src/verify.ts";
import { openEnvironment } from "../plugins/index.ts";
import { ManifestSchema } from "../sdk/env/schemas.ts";
import { type Bench, type BenchTable, fmt } from "./harness.ts";

/**
 * AIME verifier throughput (verifications/s): in process; inside one raw isolate (a host->isolate call per
 * verification, and a batch per call); and through the isolate pool (`openEnvironment`, one
 * reset+step episode per verification, two instances in parallel). Target: >= 5,000/s for AIME-style
 * answers on 2 cores, and for math mode on one core.
 */

const AIME_DIR = new URL("../environments/aime/", import.meta.url).pathname;
const DATA = new URL("../../shared/data/aime-2024.jsonl", import.meta.url).pathname;
const TARGET = 5_000;

const REASONING = "Let us compute step by step. We have $x^2 + y^2 = 25$ and so $xy = 12$. ".repeat(20);

/** Realistic responses: ~1.5 KB of reasoning, then the answer in one of the common styles, right or wrong. */
function makeCases(): Array<[string, string]> {
  const styles = (a: string, n: number): string[] => [
    `${REASONING}\nTherefore the answer is $\\boxed{${a}}$.`,
    `<think>${REASONING} maybe \\boxed{${n + 1}}</think>\n${REASONING.slice(0, 300)}\\boxed{${a.padStart(3, "0")}}`,
    `${REASONING}\n**Answer:** **${a}**`,
    `${REASONING}\nSo $\\boxed{\\frac{${2 * n}}{2}}$.`,
    `${REASONING}\n\\boxed{${n + 1}} or \\boxed{${a}}`,
    `${REASONING}\nThe final answer is $${a}$. I hope it is correct.`,
  ];
  const answers = ["204", "25", "809", "116", "104", "73", "33", "0", "999", "540"];
  return answers.flatMap((a) => styles(a, Number(a)).map((r) => [a, r] as [string, string]));
}

/** Math-mode golds with a right and a wrong way to write each, in the common answer styles. */
const MATH_ANSWERS: Array<[gold: string, right: string, wrong: string]> = [
  ["\\frac{\\sqrt{3}}{2}", "\\frac{1}{2}\\sqrt{3}", "\\frac{\\sqrt{2}}{2}"],
  ["2\\sqrt{2}", "\\sqrt{8}", "2\\sqrt{3}"],
  ["x^2-1", "(x-1)(x+1)", "(x-1)^2"],
  ["(1, 2)", "(1,2)", "(2, 1)"],
  ["[0, 1)", "0 \\le x < 1", "[0, 1]"],
  ["\\frac{1}{3}", "0.3333", "0.333"],
  ["7425000", "7,425,000", "7,425,001"],
  ["k = 11", "11", "12"],
  ["\\{1, 2\\}", "2, 1", "1, 3"],
  ["\\tan^2 y + 1", "\\sec^2 y", "\\csc^2 y"],
];

function makeMathCases(): Array<[string, string]> {
  return MATH_ANSWERS.flatMap(([gold, right, wrong]) =>
    [right, wrong].flatMap((a) => [
      [gold, `${REASONING}\nTherefore the answer is $\\boxed{${a}}$.`],
      [gold, `<think>${REASONING}</think>\n${REASONING.slice(0, 300)}\nFinal Answer: The final answer is $${a}$. I hope it is correct.`],
      [gold, `${REASONING}\nHence\n\\[ ${a} \\]`],
    ] as Array<[string, string]>),
  );
}

function measureLoop(seconds: number, fn: () => void): number {
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    fn();
    n++;
  }
  return n / ((performance.now() - t0) / 1000);
}

async function bundleVerifier(): Promise<string> {
  const contents = [
    'import { verifyAnswer } from "./verify.ts";',
    "globalThis.verifyOne = (gold, response) => verifyAnswer(gold, response).reward;",
    "globalThis.verifyBatch = (json) => { let s = 0; for (const [g, r] of JSON.parse(json)) s += verifyAnswer(g, r).reward; return s; };",
    'globalThis.verifyMath = (gold, response) => verifyAnswer(gold, response, { mode: "math" }).reward;',
  ].join("\n");
  const out = await build({
    stdin: { contents, resolveDir: join(AIME_DIR, "src"), loader: "ts", sourcefile: "bench-entry.ts" },
    bundle: true,
    write: false,
    format: "iife",
    platform: "neutral",
    mainFields: ["module", "main"],
    target: "es2022",
    logLevel: "silent",
  });
  return out.outputFiles[0]!.text;
}

export const bench: Bench = {
  name: "verifier",
  async run({ quick, log }) {
    const seconds = quick ? 0.3 : 2;
    const cases = makeCases();
    let i = 0;
    const next = (): [string, string] => cases[i++ % cases.length]!;
    const expected = cases.reduce((s, [g, r]) => s + verifyAnswer(g, r).reward, 0);

    const mathCases = makeMathCases();
    let j = 0;
    const nextMath = (): [string, string] => mathCases[j++ % mathCases.length]!;
    const mathExpected = mathCases.reduce((s, [g, r]) => s + verifyAnswer(g, r, { mode: "math" }).reward, 0);

    log("in process");
    const inProcess = measureLoop(seconds, () => {
      const [g, r] = next();
      verifyAnswer(g, r);
    });
    const mathInProcess = measureLoop(seconds, () => {
      const [g, r] = nextMath();
      verifyAnswer(g, r, { mode: "math" });
    });

    log("raw isolate");
    const isolate = new ivm.Isolate({ memoryLimit: 128 });
    const context = await isolate.createContext();
    await context.global.set("globalThis", context.global.derefInto());
    await isolate.compileScript(await bundleVerifier()).then((s) => s.run(context));
    const one = (await context.global.get("verifyOne", { reference: true })) as ivm.Reference<(g: string, r: string) => number>;
    const batch = (await context.global.get("verifyBatch", { reference: true })) as ivm.Reference<(json: string) => number>;
    const batchJson = JSON.stringify(cases);
    if (batch.applySync(undefined, [batchJson]) !== expected) throw new Error("the isolate's verdicts differ from in-process ones");
    const perCall = measureLoop(seconds, () => {
      const [g, r] = next();
      one.applySync(undefined, [g, r]);
    });
    const batched = measureLoop(seconds, () => batch.applySync(undefined, [batchJson])) * cases.length;
    const math = (await context.global.get("verifyMath", { reference: true })) as ivm.Reference<(g: string, r: string) => number>;
    const mathInIsolate = mathCases.reduce((s, [g, r]) => s + math.applySync(undefined, [g, r]), 0);
    if (mathInIsolate !== mathExpected) throw new Error("the isolate's math verdicts differ from in-process ones");
    // The first math call builds nothing (the CAS is lazy); a warm-up pass is part of the loop's median.
    const mathPerCall = measureLoop(seconds, () => {
      const [g, r] = nextMath();
      math.applySync(undefined, [g, r]);
    });
    isolate.dispose();

    log("isolate pool (openEnvironment, 2 instances)");
    const dataDir = await mkdtemp(join(tmpdir(), "aj-verifier-bench-"));
    let pool = 0;
    try {
      await prepare({ pluginDir: dataDir, outDir: dataDir, options: { data: DATA }, online: false, log: () => {} });
      const manifest = ManifestSchema.parse(JSON.parse(readFileSync(join(AIME_DIR, "agentjet.env.json"), "utf8")));
      const rt = await openEnvironment({ dir: AIME_DIR, manifest, dataDir, maxInstances: 2, warm: 2 });
      const task = (await rt.listTasks("test"))[0]!;
      const worker = async (until: number): Promise<number> => {
        let n = 0;
        while (performance.now() < until) {
          const s = await rt.openEpisode();
          if (s.kind !== "ok") throw new Error(s.failure.message);
          await s.value.reset({ task, seed: n, builtinAgents: [] });
          const [, response] = next();
          await s.value.step({ actions: { solver: response } });
          await s.value.close();
          n++;
        }
        return n;
      };
      await worker(performance.now() + 200);
      const t0 = performance.now();
      const counts = await Promise.all([worker(t0 + seconds * 1000), worker(t0 + seconds * 1000)]);
      pool = counts.reduce((a, b) => a + b, 0) / ((performance.now() - t0) / 1000);
      await rt.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }

    const table: BenchTable = {
      title: `AIME verifier throughput (${cases.length} realistic ~1.5 KB responses, ${availableParallelism()} cores visible)`,
      columns: ["where", "verifications/s", "vs in-process"],
      rows: [
        ["in process (1 thread)", fmt(inProcess), "1.00"],
        ["one isolate, a call per verification", fmt(perCall), fmt(perCall / inProcess)],
        ["one isolate, a batch per call", fmt(batched), fmt(batched / inProcess)],
        ["isolate pool, reset+step episode each, 2 instances", fmt(pool), fmt(pool / inProcess)],
        [`math mode, in process (${mathCases.length} responses, half wrong)`, fmt(mathInProcess), fmt(mathInProcess / inProcess)],
        ["math mode, one isolate, a call per verification", fmt(mathPerCall), fmt(mathPerCall / inProcess)],
      ],
      notes: [
        `Load average when measured: ${loadavg().map((x) => x.toFixed(1)).join(", ")} on ${availableParallelism()} cores (the CPUs are shared; absolute numbers scale with it).`,
        `Target >= ${TARGET}/s for AIME-style answers on 2 cores: verifying inside an isolate ${perCall >= TARGET ? "meets" : "misses"} it on one thread (${fmt(perCall)}/s); ` +
          `a full episode per verification through the pool gives ${fmt(pool)}/s, bounded by the protocol round trips, not the verifier.`,
        `Target >= ${TARGET}/s for math mode on one core: inside an isolate it ${mathPerCall >= TARGET ? "meets" : "misses"} it (${fmt(mathPerCall)}/s).`,
      ],
    };
    return [table];
  },
};
