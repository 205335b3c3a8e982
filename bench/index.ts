import { mkdirSync, writeFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Bench, renderTables } from "./harness.ts";

/** Runs every `bench/*.bench.ts` (or those named on the command line) and writes bench/results/RESULTS.md. */
const dir = import.meta.dirname;
const only = process.argv.slice(2);
const quick = process.env.BENCH_QUICK === "1";
const files = (await readdir(dir)).filter((f) => f.endsWith(".bench.ts")).sort();
const sections: string[] = [
  "# Benchmark results",
  "",
  `Run ${new Date().toISOString()} on Node ${process.version}, ${process.platform}/${process.arch}${quick ? " (quick)" : ""}.`,
  "",
];
for (const f of files) {
  const mod = (await import(pathToFileURL(join(dir, f)).href)) as { bench: Bench };
  const b = mod.bench;
  if (only.length > 0 && !only.includes(b.name)) continue;
  console.log(`bench: ${b.name}`);
  const tables = await b.run({ quick, log: (l) => console.log(`  ${l}`) });
  const md = renderTables(b.name, tables);
  console.log(md);
  sections.push(md);
}
mkdirSync(join(dir, "results"), { recursive: true });
const out = join(dir, "results", only.length ? `RESULTS-${only.join("-")}.md` : "RESULTS.md");
writeFileSync(out, sections.join("\n"));
console.log(`bench: wrote ${out}`);
