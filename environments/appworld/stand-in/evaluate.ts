import type { AppState } from "./apps.ts";
import type { Value } from "./interpreter.ts";
import { pyRepr } from "./python-format.ts";

/** A unit-test style check over the world's end state (and the answer given to complete_task). */
export type Check =
  | { kind: "todo_exists"; title: string; list?: string; done?: boolean }
  | { kind: "todo_count"; count: number }
  | { kind: "playlist_songs"; title: string; song_ids: number[] }
  | { kind: "answer"; expected: string }
  | { kind: "app_unchanged"; app: keyof AppState };

export interface TestTrackerDict {
  success: boolean;
  difficulty: number;
  num_tests: number;
  passes: Array<{ requirement: string; label: string | null }>;
  failures: Array<{ requirement: string; trace: string; label: string | null }>;
}

/** AppWorld's answer normalisation, roughly: text, trimmed, case-insensitive. */
function answerText(v: Value): string {
  return (v === null ? "" : typeof v === "string" ? v : pyRepr(v)).trim().toLowerCase();
}

function run(check: Check, end: AppState, start: AppState, answer: Value): string | undefined {
  switch (check.kind) {
    case "todo_exists": {
      const hit = end.todo.tasks.filter((t) => t.title === check.title && (check.list === undefined || t.list === check.list) && (check.done === undefined || t.done === check.done));
      return hit.length === 1 ? undefined : `expected exactly 1 matching task, found ${hit.length}`;
    }
    case "todo_count":
      return end.todo.tasks.length === check.count ? undefined : `${end.todo.tasks.length} == ${check.count}`;
    case "playlist_songs": {
      const lists = end.music.playlists.filter((p) => p.title === check.title);
      if (lists.length !== 1) return `expected exactly 1 playlist titled ${pyRepr(check.title)}, found ${lists.length}`;
      const got = [...lists[0]!.song_ids].sort((a, b) => a - b);
      const want = [...check.song_ids].sort((a, b) => a - b);
      return JSON.stringify(got) === JSON.stringify(want) ? undefined : `${pyRepr(got)} == ${pyRepr(want)}`;
    }
    case "answer":
      return answerText(answer) === answerText(check.expected) ? undefined : `${pyRepr(answerText(answer))} == ${pyRepr(answerText(check.expected))}`;
    case "app_unchanged":
      return JSON.stringify(end[check.app]) === JSON.stringify(start[check.app]) ? undefined : `the ${check.app} database changed`;
  }
}

/** Runs a task's tests, answering in the shape of AppWorld's `TestTracker.to_dict(stats_only=False)`. */
export function evaluateWorld(input: {
  tests: Array<{ requirement: string; label?: string | null; check: Check }>;
  difficulty: number;
  start: AppState;
  end: AppState;
  answer: Value;
}): TestTrackerDict {
  const passes: TestTrackerDict["passes"] = [];
  const failures: TestTrackerDict["failures"] = [];
  for (const test of input.tests) {
    const problem = run(test.check, input.end, input.start, input.answer);
    const label = test.label ?? null;
    if (problem === undefined) passes.push({ requirement: test.requirement, label });
    else failures.push({ requirement: test.requirement, label, trace: `\`\`\`python\ntest.case(${pyRepr(test.check as unknown as Value)})\n\`\`\`\n----------\nAssertionError: ${problem}` });
  }
  return { success: failures.length === 0, difficulty: input.difficulty, num_tests: input.tests.length, passes, failures };
}

/** `TestTracker.report(...)`: the plain-text form `/evaluate` answers with `report: true`. */
export function reportText(t: TestTrackerDict): string {
  const lines = ["Overall Stats", `Num Passed Tests : ${t.passes.length}`, `Num Failed Tests : ${t.failures.length}`, `Num Total  Tests : ${t.num_tests}`, "Passes"];
  for (const p of t.passes) lines.push(">> Passed Requirement", p.requirement);
  if (!t.passes.length) lines.push("None");
  lines.push("Fails");
  for (const f of t.failures) lines.push(">> Failed Requirement", f.requirement, f.trace);
  if (!t.failures.length) lines.push("None");
  return lines.join("\n");
}
