import type { EnvAnnouncement } from "../../sdk/swarm/protocol.ts";
import type { SchedulerEnvironment } from "./types.ts";

/** Whether a client's announced environment may run a run environment's episodes, and if not, why and how to fix it. */
export type EnvMatch = { kind: "match" } | { kind: "mismatch"; reason: string; fix: string };

const short = (hash: string): string => hash.slice(0, 12);

/**
 * The routing rule: same name and version, and the pinned hash when the run pins one. A development
 * version (a local plugin being edited) matches whatever its hash when the run accepts them.
 */
export function matchEnvironment(env: SchedulerEnvironment, a: EnvAnnouncement): EnvMatch {
  if (a.name !== env.name) return { kind: "mismatch", reason: `the run has no environment '${a.name}'`, fix: "" };
  if (a.version !== env.version) {
    return {
      kind: "mismatch",
      reason: `it offers ${a.name}@${a.version}, the run needs ${env.name}@${env.version}`,
      fix: `offer version ${env.version}, or set \`version: ${a.version}\` on the run's ${env.name} entry`,
    };
  }
  if (env.hash === undefined || env.hash === a.hash) return { kind: "match" };
  if (a.dev && env.acceptDev) return { kind: "match" };
  if (a.dev) {
    return {
      kind: "mismatch",
      reason: `it offers a development version of ${a.name}@${a.version} (hash ${short(a.hash)}), and the run accepts only the pinned hash ${short(env.hash)}`,
      fix:
        `start the run with development versions allowed (\`allowDev: true\` on its ${env.name} entry, or \`path: <plugin dir>\`), ` +
        `or re-pin the edited plugin (agentjet env pack <plugin dir> --write-registry registry.json; agentjet env add ${env.name} --force) and restart the run`,
    };
  }
  return {
    kind: "mismatch",
    reason: `it offers ${a.name}@${a.version} with hash ${short(a.hash)}, and the run pins hash ${short(env.hash)}`,
    fix: `install the run's build on the client (agentjet env add ${env.name} --force, from the run's registry), or offer it as a development version (--env-path <plugin dir>) to a run that allows them`,
  };
}

/** True when some announced environment may run `env`'s episodes. */
export function offersEnvironment(env: SchedulerEnvironment, announced: readonly EnvAnnouncement[]): boolean {
  return announced.some((a) => matchEnvironment(env, a).kind === "match");
}

/**
 * What to tell a client (and log on the server) when its environments do not all fit the run: one line
 * per announced environment the run has but refuses, with the hashes and the fix; and when nothing it
 * offers fits, what the run needs. Null when every environment the run has that it offers matches.
 */
export function describeMismatch(envs: readonly SchedulerEnvironment[], announced: readonly EnvAnnouncement[]): string | null {
  const lines: string[] = [];
  let matched = 0;
  for (const a of announced) {
    const same = envs.filter((e) => e.name === a.name);
    const results = same.map((e) => matchEnvironment(e, a));
    if (results.some((r) => r.kind === "match")) {
      matched += 1;
      continue;
    }
    for (const r of results) if (r.kind === "mismatch") lines.push(`${a.name}: ${r.reason}; fix: ${r.fix}`);
  }
  if (matched === 0) {
    const needs = envs.map((e) => `${e.name}@${e.version}${e.hash === undefined ? "" : ` (hash ${short(e.hash)}${e.acceptDev ? " or a development version" : ""})`}`);
    const offers = announced.map((a) => `${a.name}@${a.version} (${a.dev ? "development version, " : ""}hash ${short(a.hash)})`);
    lines.unshift(`this client gets no episodes: the run needs ${needs.join(", ")}; it offers ${offers.length ? offers.join(", ") : "nothing"}`);
  } else if (lines.length > 0) {
    lines.unshift("some of this client's environments get no episodes");
  }
  return lines.length > 0 ? lines.join("\n") : null;
}
