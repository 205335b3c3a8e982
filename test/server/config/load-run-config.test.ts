import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatConfigIssues, loadRunConfig, parseRunConfig } from "../../../server/config/load-run-config.ts";
import { command } from "../../../hub/cli/commands/serve.ts";

const GOOD = `
policies:
  main: {}
environments:
  - name: aime
    roles: { solver: main }
`;

describe("run config loading", () => {
  it("parses a valid config with defaults", () => {
    const r = parseRunConfig(GOOD);
    expect(r.kind).toBe("ok");
    if (r.kind === "ok") expect(r.config.server.port).toBe(8700);
  });

  it("points at the offending field with its line, message and hint", () => {
    const r = parseRunConfig(`${GOOD}server:\n  port: "8700"\n`, "run.yaml");
    expect(r.kind).toBe("invalid");
    if (r.kind !== "invalid") return;
    expect(r.issues).toEqual([{ path: "server.port", message: expect.stringContaining("expected number"), hint: "write the number without quotes", line: 8, column: 9 }]);
    expect(formatConfigIssues(r)).toBe(`run.yaml:8:9  server.port: ${r.issues[0]!.message} (hint: write the number without quotes)`);
  });

  it("run.deterministic refuses a strategy clients decide (any-client, all-clients) at batching.strategy", () => {
    const r = parseRunConfig(`${GOOD}run: { deterministic: true }\nbatching: { strategy: any-client }\n`);
    if (r.kind !== "invalid") throw new Error("expected invalid");
    expect(r.issues).toEqual([expect.objectContaining({ path: "batching.strategy", message: expect.stringContaining("run.deterministic") })]);
    const ok = parseRunConfig(`${GOOD}run: { deterministic: true }\nbatching: { strategy: valid-tasks }\n`);
    expect(ok.kind === "ok" && ok.config.run.deterministic).toBe(true);
  });

  // Regression: with every weight 0 the scheduler planned empty batches forever, in one synchronous
  // loop: the run hung at 100% CPU and ignored Ctrl-C and SIGTERM.
  it("refuses mixing weights that are all 0 at some step, naming the step; a schedule that leaves 0 is fine", () => {
    const envs = (a: string, b: string) => `policies:\n  main: {}\nenvironments:\n  - { name: arith, weight: ${a}, roles: { solver: main } }\n  - { name: countdown, weight: ${b}, roles: { solver: main } }\n`;
    const refused = (a: string, b: string) => {
      const r = parseRunConfig(envs(a, b));
      return r.kind === "invalid" ? r.issues.filter((i) => i.path === "environments").map((i) => i.message) : [];
    };
    expect(refused("0", "0")).toEqual([expect.stringContaining("every environment's weight is 0 at step 0")]);
    expect(refused("{ kind: linear, start: 0, end: 1, steps: 10 }", "0")).toEqual([expect.stringContaining("at step 0")]);
    expect(refused("{ kind: linear, start: 1, end: 0, steps: 10 }", "{ kind: cosine, start: 2, end: 0, steps: 20 }")).toEqual([
      expect.stringContaining("from step 20 on"),
    ]);
    expect(refused("{ kind: constant, start: 0, end: 5, steps: 10 }", "0")).toHaveLength(1);
    expect(refused("0", "1")).toEqual([]);
    expect(refused("{ kind: linear, start: 1, end: 0, steps: 10 }", "{ kind: linear, start: 0, end: 1, steps: 10 }")).toEqual([]);
    expect(refused("{ kind: linear, start: 1, end: 0, steps: 10 }", "{ kind: linear, start: 0, end: 1, steps: 30 }")).toEqual([]);
  });

  it("reports missing sections and bad enums", () => {
    const r = parseRunConfig("policies:\n  main:\n    tokenizer: qwen4\n");
    if (r.kind !== "invalid") throw new Error("expected invalid");
    expect(r.issues.map((i) => i.path).sort()).toEqual(["environments", "policies.main.tokenizer"]);
    expect(r.issues.find((i) => i.path === "environments")!.hint).toBe("this field is required");
    expect(r.issues.find((i) => i.path === "policies.main.tokenizer")!.line).toBe(3);
  });

  it("a misspelt field is an issue at its key with the closest field, not dropped (zod drops unknown keys)", () => {
    const yaml = `${GOOD}run: { stepz: 10 }\nbatching:\n  batchTask: 4\n  Strategy: tasks\n`;
    const r = parseRunConfig(yaml, "run.yaml");
    if (r.kind !== "invalid") throw new Error("expected invalid");
    expect(r.issues).toEqual([
      expect.objectContaining({ path: "run.stepz", message: expect.stringContaining("not a field (run has: dir, seed, steps"), hint: "did you mean 'steps'?", line: 7, column: 8 }),
      expect.objectContaining({ path: "batching.batchTask", hint: "did you mean 'batchTasks'?", line: 9, column: 3 }),
      expect.objectContaining({ path: "batching.Strategy", hint: "did you mean 'strategy'?" }),
    ]);
    const far = parseRunConfig(`${GOOD}colour: blue\n`);
    expect(far.kind === "invalid" && far.issues[0]!.hint).toBe("every field: agentjet config docs; a key of your own (YAML anchors) starts with x-");
  });

  it("checks the fields of a discriminated engine by its kind, and lets maps and options take any key", () => {
    const engine = parseRunConfig(`${GOOD}frozen:\n  opp: { baseUrl: "http://h/v1", model: m }\n`.replace("main: {}", "main: { engine: { kind: embedded, baseUrls: [x] } }"));
    if (engine.kind !== "invalid") throw new Error("expected invalid");
    expect(engine.issues.map((i) => i.path)).toEqual(["policies.main.engine.baseUrls"]);
    const maps = parseRunConfig(GOOD.replace("roles: { solver: main }", "roles: { solver: main, '*': main }\n    options: { data: x, anything: { nested: 1 } }"));
    expect(maps.kind).toBe("ok");
  });

  it("YAML merge keys merge; keys starting with x- hold anchors and are left alone", () => {
    const yaml = `x-defaults: &d { engine: { kind: embedded }, optimizer: { lr: 0.0001 } }\npolicies:\n  main: { <<: *d, tokenizer: embedded }\nenvironments: [{ name: arith, roles: { solver: main } }]\n`;
    const r = parseRunConfig(yaml);
    expect(r.kind === "ok" && r.config.policies.main!.optimizer.lr).toBe(0.0001);
    const plain = parseRunConfig(yaml.replace("x-defaults", "defaults"));
    expect(plain.kind === "invalid" && plain.issues.map((i) => [i.path, i.hint])).toEqual([["defaults", "every field: agentjet config docs; a key of your own (YAML anchors) starts with x-"]]);
  });

  it("an empty file (or one of comments only) is one issue that says so, not the two sections it lacks", () => {
    for (const text of ["", "# a comment\n\n"]) {
      const r = parseRunConfig(text, "run.yaml");
      if (r.kind !== "invalid") throw new Error("expected invalid");
      expect(r.issues).toEqual([expect.objectContaining({ path: "", message: "the file holds no config (it is empty or only comments)" })]);
      expect(formatConfigIssues(r)).toMatch(/^run\.yaml  the file holds no config .*\(hint: a run config sets at least policies and environments; every field: agentjet config docs\)$/);
    }
  });

  it("reports YAML syntax errors with a position, and unreadable files", async () => {
    const r = parseRunConfig("policies: [\n");
    expect(r.kind).toBe("invalid");
    if (r.kind === "invalid") expect(r.issues[0]!.message).toMatch(/^YAML: /);
    expect((await loadRunConfig("/nonexistent/run.yaml")).kind).toBe("unreadable");
  });
});

describe("agentjet serve", () => {
  it("explains every flag in --help", () => {
    for (const flag of ["--config", "--host", "--port", "--run-dir", "--log-level", "--help", "AGENTJET_KEY_SECRET"]) expect(command.help).toContain(flag);
  });

  it("exits with usage errors before starting anything (no --config is not one: serve then starts empty)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aj-serve-"));
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "policies: {}\n");
    const errors: string[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => errors.push(args.join(" "));
    try {
      expect(await command.run(["--config", bad, "--port", "99999"])).toBe(2);
      expect(await command.run(["--config", bad])).toBe(2);
      expect(await command.run(["--config", join(dir, "missing.yaml")])).toBe(3);
      expect(await command.run(["--bogus"])).toBe(2);
      // an unset shell variable: Number("") is 0, which listened on a random port
      expect(await command.run(["--port", ""])).toBe(2);
    } finally {
      console.error = original;
      rmSync(dir, { recursive: true, force: true });
    }
    expect(errors.join("\n")).toContain(`${bad}:1:11  policies: at least one policy`);
    // a file that is not there is not an invalid config
    expect(errors.join("\n")).toContain(`agentjet serve: cannot read the run config\n${join(dir, "missing.yaml")}: cannot read: ENOENT`);
    expect(errors.join("\n")).toContain("agentjet serve: --port must be an integer 0-65535, got ''");
  });
});
