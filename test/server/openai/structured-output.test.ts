import { Ajv } from "ajv";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedModelSchema, OptimizerSchema } from "../../../server/config/run-config.ts";
import { createEmbeddedEngine } from "../../../server/engines/embedded/index.ts";
import { createOpenAITokensEngine } from "../../../server/engines/openai-tokens/index.ts";
import { doublesPerSuite } from "../engines/external/doubles.ts";
import { buildTestServer, claimSolver, testConfig } from "../helpers/build-test-server.ts";
import { embeddedTokenizer as tok } from "../helpers/scripted-engine.ts";

/** An untrained embedded policy: whatever it says is noise, so only the mask can make it well-formed. */
function untrained(seed: number) {
  return createEmbeddedEngine({
    vocabSize: tok.vocabSize,
    model: EmbeddedModelSchema.parse({ layers: 1, dim: 16, heads: 2, context: 512, seed }),
    optimizer: OptimizerSchema.parse({}),
  });
}

const SCHEMAS: Array<Record<string, unknown>> = [
  {
    type: "object",
    properties: {
      name: { type: "string", maxLength: 12 },
      age: { type: "integer" },
      score: { type: "number" },
      ok: { type: "boolean" },
      tags: { type: "array", items: { type: "string", maxLength: 5 }, maxItems: 3 },
      role: { enum: ["wolf", "seer", "witch"] },
      note: { type: ["string", "null"], maxLength: 8 },
    },
    required: ["name", "age", "role", "ok"],
    additionalProperties: false,
  },
  { type: "object", properties: { vote: { type: "string", enum: ["p1", "p2", "p3"] }, reason: { type: "string", maxLength: 20 } }, required: ["vote"] },
  { type: "array", items: { type: "integer" }, minItems: 2, maxItems: 4 },
  { type: "object", properties: { nested: { type: "object", properties: { x: { type: "number" }, y: { anyOf: [{ type: "string", maxLength: 4 }, { type: "null" }] } }, required: ["x", "y"] } }, required: ["nested"] },
];

describe("structured output on the embedded engine (untrained)", () => {
  let app: FastifyInstance;
  let chat: (body: Record<string, unknown>) => Promise<{ statusCode: number; json(): any }>;

  beforeAll(async () => {
    app = await buildTestServer({ main: untrained(11) });
    const key = claimSolver(app, "s", "t");
    chat = (body) => app.inject({ method: "POST", url: "/v1/chat/completions", headers: { authorization: `Bearer ${key}` }, payload: { model: "main", messages: [{ role: "user", content: "Answer." }], ...body } });
  });

  afterAll(async () => {
    await app.close();
  });

  it("json_schema output always parses and validates", async () => {
    const ajv = new Ajv();
    for (const [i, schema] of SCHEMAS.entries()) {
      const validate = ajv.compile(schema);
      for (let seed = 0; seed < 6; seed++) {
        const res = await chat({ response_format: { type: "json_schema", json_schema: { name: `s${i}`, schema } }, temperature: 1, seed, max_tokens: 120 });
        expect(res.statusCode).toBe(200);
        const content = res.json().choices[0].message.content as string;
        const value = JSON.parse(content) as unknown;
        expect(validate(value), `schema ${i} seed ${seed}: ${content} ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
  });

  // The embedded tokenizer spells non-ASCII text in byte tokens: a literal that needs one used to end the
  // output there (`"caf`, finish "length"), and strings held ASCII only.
  it("json_schema output that needs non-ASCII characters (spelt in byte tokens) parses and validates", async () => {
    const ajv = new Ajv();
    const schemas = [
      { enum: ["café", "naïve", "🙂 ok"] },
      { type: "object", properties: { clé: { type: "integer" }, mot: { type: "string", minLength: 2, maxLength: 6 } }, required: ["clé", "mot"], additionalProperties: false },
    ];
    for (const [i, schema] of schemas.entries()) {
      const validate = ajv.compile(schema);
      for (let seed = 0; seed < 6; seed++) {
        const res = await chat({ response_format: { type: "json_schema", json_schema: { name: `u${i}`, schema } }, temperature: 1, seed, max_tokens: 80 });
        const choice = res.json().choices[0];
        expect([res.statusCode, choice.finish_reason]).toEqual([200, "stop"]);
        const value = JSON.parse(choice.message.content as string) as unknown;
        expect(validate(value), `schema ${i} seed ${seed}: ${choice.message.content}`).toBe(true);
      }
    }
  });

  it("finishes inside a tight max_tokens, and refuses one too small for the schema", async () => {
    const schema = SCHEMAS[0]!;
    for (let seed = 0; seed < 4; seed++) {
      const res = await chat({ response_format: { type: "json_schema", json_schema: { name: "tight", schema } }, seed, max_tokens: 50 });
      expect(() => JSON.parse(res.json().choices[0].message.content)).not.toThrow();
      expect(res.json().usage.completion_tokens).toBeLessThanOrEqual(50);
    }
    const small = await chat({ response_format: { type: "json_schema", json_schema: { name: "tight", schema } }, max_tokens: 10 });
    expect([small.statusCode, small.json().error.param]).toEqual([400, "max_tokens"]);
  });


  it("json_object output is a JSON object", async () => {
    for (let seed = 0; seed < 6; seed++) {
      const res = await chat({ response_format: { type: "json_object" }, seed, max_tokens: 60 });
      const v = JSON.parse(res.json().choices[0].message.content) as unknown;
      expect(typeof v === "object" && v !== null && !Array.isArray(v)).toBe(true);
    }
  });

  it("tool_choice required always yields a tool call with valid arguments; a named function is that function", async () => {
    const params = { type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } }, required: ["a", "b"] };
    const tools = [
      { type: "function", function: { name: "add", parameters: params } },
      { type: "function", function: { name: "shout", parameters: { type: "object", properties: { text: { type: "string", maxLength: 10 } }, required: ["text"] } } },
    ];
    const validate = new Ajv().compile(params);
    for (let seed = 0; seed < 8; seed++) {
      const res = await chat({ tools, tool_choice: "required", seed, max_tokens: 80, parallel_tool_calls: false });
      const choice = res.json().choices[0];
      expect(choice.finish_reason).toBe("tool_calls");
      expect(choice.message.tool_calls).toHaveLength(1);
      expect(["add", "shout"]).toContain(choice.message.tool_calls[0].function.name);
      const named = (await chat({ tools, tool_choice: { type: "function", function: { name: "add" } }, seed, max_tokens: 80 })).json().choices[0];
      expect(named.message.tool_calls[0].function.name).toBe("add");
      expect(validate(JSON.parse(named.message.tool_calls[0].function.arguments))).toBe(true);
    }
  });

  // The shortest forced call was counted in characters: `add(a)` asked for 58 tokens where the tokenizer
  // spells `<tool_call>` as one, and a max_tokens that held the call was refused.
  it("a forced tool call fits the fewest tokens that spell it, and always completes inside that many", async () => {
    const tools = [{ type: "function", function: { name: "add", parameters: { type: "object", properties: { a: { type: "integer" } }, required: ["a"] } } }];
    const refused = (await chat({ tools, tool_choice: "required", max_tokens: 1 })).json().error.message as string;
    const least = Number(/allows \((\d+)\)/.exec(refused)?.[1]);
    expect(least).toBeLessThan(`<tool_call>{"name":"add","arguments":{"a":0}}</tool_call>`.length);
    for (let seed = 0; seed < 6; seed++) {
      const res = await chat({ tools, tool_choice: "required", seed, temperature: 1, max_tokens: least });
      const choice = res.json().choices[0];
      expect([res.statusCode, choice.finish_reason]).toEqual([200, "tool_calls"]);
      expect(JSON.parse(choice.message.tool_calls[0].function.arguments)).toEqual({ a: expect.any(Number) });
      expect(res.json().usage.completion_tokens).toBeLessThanOrEqual(least);
    }
  });

  it("a schema keyword that cannot be enforced is a 400 naming the field", async () => {
    const res = await chat({ response_format: { type: "json_schema", json_schema: { name: "p", schema: { type: "string", pattern: "^a+$" } } } });
    expect([res.statusCode, res.json().error.param]).toEqual([400, "response_format"]);
  });
});

describe("structured output on the vLLM-shaped engine", () => {
  const rig = doublesPerSuite({ replicas: 1, vllm: { vocabSize: tok.vocabSize } });

  it("passes json constraints on as structured_outputs; a forced tool call is a 400", async () => {
    const app = await buildTestServer({ main: createOpenAITokensEngine(rig().config({ maxContext: 512 })) });
    const key = claimSolver(app, "v", "t");
    const chat = (body: Record<string, unknown>) =>
      app.inject({ method: "POST", url: "/v1/chat/completions", headers: { authorization: `Bearer ${key}` }, payload: { model: "main", messages: [{ role: "user", content: "x" }], max_tokens: 8, ...body } });
    const schema = { type: "object", properties: { a: { type: "integer" } } };
    expect((await chat({ response_format: { type: "json_schema", json_schema: { name: "a", schema } } })).statusCode).toBe(200);
    expect((rig().replicas[0]!.requests.at(-1) as { structured_outputs: unknown }).structured_outputs).toEqual({ json: schema });
    expect((await chat({ response_format: { type: "json_object" } })).statusCode).toBe(200);
    expect((rig().replicas[0]!.requests.at(-1) as { structured_outputs: unknown }).structured_outputs).toEqual({ json_object: true });
    const forced = await chat({ tools: [{ type: "function", function: { name: "f" } }], tool_choice: "required" });
    expect([forced.statusCode, forced.json().error.param]).toEqual([400, "tool_choice"]);
    await app.close();
  });
});

// Regression: a run whose sampling.maxTokens is below a schema's shortest answer failed every call with
// a 400 (Werewolves' decisions under maxTokens 24: every episode aborted, nothing trained), and a
// conversation that had outgrown the room for the answer was a 400 too, not the context overflow it is.
describe("structured output under a small run default (sampling.maxTokens 8)", () => {
  it("gives the run's default way to the schema's shortest answer, and answers a context without room for it as an overflow", async () => {
    const app = await buildTestServer({ main: untrained(12) }, { config: testConfig({ sampling: { maxTokens: 8 } }) });
    try {
      const key = claimSolver(app, "d", "t");
      const format = { type: "json_schema", json_schema: { name: "tight", schema: SCHEMAS[0]! } };
      const chat = (content: string) =>
        app.inject({ method: "POST", url: "/v1/chat/completions", headers: { authorization: `Bearer ${key}` }, payload: { model: "main", messages: [{ role: "user", content }], response_format: format, seed: 1 } });
      const byDefault = await chat("Answer.");
      expect(byDefault.statusCode, byDefault.body).toBe(200);
      expect(() => JSON.parse(byDefault.json().choices[0].message.content)).not.toThrow();
      const full = await chat("x".repeat(480));
      expect(full.statusCode, full.body).toBe(200);
      expect(full.json().choices[0]).toMatchObject({ finish_reason: "length", message: { content: "" } });
    } finally {
      await app.close();
    }
  });
});
