import { describe, expect, it } from "vitest";
import { parseToolCalls } from "../../../server/tokenizers/parse-tool-calls.ts";
import { readToolCallBlock } from "../../../server/tokenizers/tool-call-block.ts";

/** Every prefix of `text`, read as a block so far. */
const prefixes = (text: string) => Array.from({ length: text.length + 1 }, (_, n) => ({ n, read: readToolCallBlock(text.slice(0, n)) }));

describe("readToolCallBlock", () => {
  const BLOCKS = [
    '{"name": "add", "arguments": {"a": 1, "b": [2.5e-3, true, null, "x}]\\"y"], "c": {"d": {}}}}',
    '\n{"name":"f","arguments":[1,{"k":"\\u00e9\\n"},-0.5]}\n',
    '{"arguments": {"a": "b"}, "name": "late"}',
    '{"name": "caf\\u00e9", "other": [1, 2], "arguments": {}}',
  ];

  it("reads every prefix of a valid block without calling it broken, the arguments growing only at their end", () => {
    for (const text of BLOCKS) {
      const parsed = JSON.parse(text) as { name: string; arguments: unknown };
      const whole = readToolCallBlock(text);
      expect(whole).toMatchObject({ name: parsed.name, closed: true, broken: false });
      const args = text.slice(whole.args!.start, whole.args!.end!);
      expect(JSON.parse(args)).toEqual(parsed.arguments);
      for (const { n, read } of prefixes(text)) {
        expect(read.broken, `${text.slice(0, n)}`).toBe(false);
        if (read.name !== null) expect(read.name).toBe(parsed.name);
        if (read.args) expect(args.startsWith(text.slice(read.args.start, read.args.end ?? n))).toBe(true);
        expect(read.closed).toBe(n >= text.trimEnd().length);
      }
    }
  });

  it("gives the name only once its string is written whole", () => {
    expect(readToolCallBlock('{"name": "ad').name).toBeNull();
    expect(readToolCallBlock('{"name": "add"').name).toBe("add");
    expect(readToolCallBlock('{"name": "a\\').name).toBeNull();
  });

  it("tells an object or array of arguments from other values", () => {
    expect(readToolCallBlock('{"arguments": {').args).toEqual({ start: 14, end: null, kind: "container" });
    expect(readToolCallBlock('{"arguments": "{}"}').args).toEqual({ start: 14, end: 18, kind: "other" });
    // a number may go on until a delimiter comes
    expect(readToolCallBlock('{"arguments": 12').args).toEqual({ start: 14, end: null, kind: "other" });
  });

  it("calls broken what no more text can make a call of", () => {
    for (const text of [
      "not json",
      '{"name" "f"}',
      '{"name": "f",, ',
      '{"arguments": {"a": 1,}',
      '{"arguments": [1 2]',
      '{"arguments": {"a": tru }',
      '{"arguments": {"a": 01}',
      '{"arguments": "\\q"}',
      '{"arguments": "a\nb"}',
      '{"name": "f", "name": "g"}',
      '{"arguments": {}, "arguments": {}}',
      '{"name": "f", "arguments": {}} trailing',
    ]) {
      expect(readToolCallBlock(text).broken, text).toBe(true);
    }
  });

  it("reads 10,000 levels of nesting without using the call stack", () => {
    const deep = `{"name": "f", "arguments": ${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
    const read = readToolCallBlock(deep);
    expect(read).toMatchObject({ closed: true, broken: false, args: { start: 27, end: 27 + 20_000, kind: "container" } });
  });
});

describe("parseToolCalls", () => {
  it("gives an object's or array's arguments as the model wrote them, and numbers the blocks", () => {
    const text = 'x<tool_call>not json</tool_call><tool_call>\n{"name": "add", "arguments": {"a": 1.0,  "b": "\\u00e9"}}\n</tool_call>';
    expect(parseToolCalls(text)).toEqual({
      content: "x<tool_call>not json</tool_call>",
      toolCalls: [{ name: "add", arguments: '{"a": 1.0,  "b": "\\u00e9"}', block: 1 }],
    });
  });

  it("gives other arguments as their JSON: a string's text, none as {}, a written-twice key as JSON.parse reads it", () => {
    const calls = parseToolCalls(
      '<tool_call>{"name": "s", "arguments": "{\\"a\\": 1}"}</tool_call><tool_call>{"name": "n"}</tool_call><tool_call>{"name": "d", "arguments": {"a": 1}, "arguments": {"b": 2}}</tool_call>',
    ).toolCalls;
    expect(calls.map((c) => c.arguments)).toEqual(['{"a": 1}', "{}", '{"b":2}']);
  });
});
