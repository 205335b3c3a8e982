import { describe, expect, it } from "vitest";
import { parseIntFlag } from "../../hub/cli/command.ts";
import { command as client } from "../../hub/cli/commands/client.ts";
import { parse } from "../../hub/cli/env/io.ts";

describe("parseIntFlag: the integer flags of every command", () => {
  it("takes digits within the range", () => {
    expect(parseIntFlag("port", "0", 0, 65535)).toEqual({ ok: true, value: 0 });
    expect(parseIntFlag("port", "8700", 0, 65535)).toEqual({ ok: true, value: 8700 });
    expect(parseIntFlag("concurrency", "4096", 1)).toEqual({ ok: true, value: 4096 });
  });

  // Regression: `--port ""` (an unset shell variable) listened on a random port and `--warm-start ""` skipped
  // the warm-start, since Number("") is 0.
  it("refuses what Number() would take: '', spaces, hex, exponents, fractions", () => {
    for (const value of ["", " ", " 7", "0x10", "1e3", "1.5", "abc", "-1"]) {
      expect(parseIntFlag("port", value, 0, 65535)).toEqual({ ok: false, message: `--port must be an integer 0-65535, got '${value}'` });
    }
    expect(parseIntFlag("concurrency", "0", 1)).toEqual({ ok: false, message: "--concurrency must be an integer of at least 1, got '0'" });
  });
});

describe("agentjet env: flag parsing", () => {
  // Regression: with --json the error's code was Node's ERR_PARSE_ARGS_UNKNOWN_OPTION, not an AJ_ERR code.
  it("a malformed flag is a coded usage error", () => {
    expect(() => parse(["--bogus"], {})).toThrow(expect.objectContaining({ code: "AJ_ERR_USAGE", message: expect.stringContaining("'--bogus'") }));
    expect(() => parse(["--out"], { out: { type: "string" } })).toThrow(expect.objectContaining({ code: "AJ_ERR_USAGE" }));
  });

  // Regression: every subcommand took --project and --registry, and those that have no use for them ignored them
  // (`env init my-env --project elsewhere` wrote ./my-env).
  it("takes --json and the flags given, nothing else", () => {
    expect(parse(["x", "--json"], {}).values).toEqual({ json: true });
    expect(() => parse(["x", "--project", "p"], {})).toThrow(expect.objectContaining({ code: "AJ_ERR_USAGE" }));
  });
});

describe("agentjet client: usage errors before anything starts", () => {
  it("names the one thing wrong, and refuses a --server that is not a URL (it was a TypeError's stack trace)", async () => {
    const errors: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => errors.push(chunk) > 0) as typeof process.stderr.write;
    try {
      expect(await client.run([])).toBe(2);
      expect(await client.run(["--server", "notaurl"])).toBe(2);
      expect(await client.run(["--server", "ftp://gpu-box:8700"])).toBe(2);
      expect(await client.run(["--server", "http://127.0.0.1:8700", "--concurrency", "0"])).toBe(2);
    } finally {
      process.stderr.write = write;
    }
    const firstLines = errors.map((e) => e.split("\n")[0]);
    expect(firstLines).toEqual([
      "agentjet client: --server is required (or AGENTJET_SERVER): the URL of agentjet serve or train, e.g. http://127.0.0.1:8700",
      "agentjet client: --server must be an http(s) or ws(s) URL such as http://127.0.0.1:8700, got 'notaurl'",
      "agentjet client: --server must be an http(s) or ws(s) URL such as http://127.0.0.1:8700, got 'ftp://gpu-box:8700'",
      "agentjet client: --concurrency must be an integer of at least 1, got '0'",
    ]);
  });
});
