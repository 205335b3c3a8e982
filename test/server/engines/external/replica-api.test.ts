import { describe, expect, it } from "vitest";
import { buildSglangRequest, parseSglangInputLogprobs, parseSglangResponse } from "../../../../server/engines/openai-tokens/sglang-api.ts";
import { buildVllmDouble } from "../../../doubles/vllm-double.ts";
import { buildVllmRequest, parseTokenId, parseVllmResponse } from "../../../../server/engines/openai-tokens/vllm-api.ts";

const PARAMS = { maxTokens: 4, temperature: 0.7, topP: 0.9, seed: 1, stopIds: [151645], topLogprobs: 2 };

describe("vLLM and SGLang wire forms", () => {
  it("token ids come only from 'token_id:N' strings", () => {
    expect(parseTokenId("token_id:151645")).toBe(151645);
    expect(parseTokenId("hello")).toBeUndefined();
    expect(parseTokenId("token_id:-1")).toBeUndefined();
  });

  it("an answer without token ids is a protocol error, never decoded text", async () => {
    const d = buildVllmDouble();
    const body = { ...buildVllmRequest("double-model", [1, 2, 3], PARAMS), return_tokens_as_token_ids: false };
    const res = await d.app.inject({ method: "POST", url: "/v1/completions", payload: body });
    expect(res.statusCode).toBe(200);
    expect(() => parseVllmResponse("x", res.json(), 2)).toThrow(expect.objectContaining({ code: "AJ_ERR_REPLICA_PROTOCOL" }));
  });

  it("the double answers in vLLM's shapes", async () => {
    const d = buildVllmDouble();
    const res = await d.app.inject({ method: "POST", url: "/v1/completions", payload: buildVllmRequest("double-model", [1, 2, 3], PARAMS) });
    const j = res.json();
    expect(j).toMatchObject({ object: "text_completion", model: "double-model", usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
    expect(j.choices[0].logprobs.tokens[0]).toMatch(/^token_id:\d+$/);
    const g = parseVllmResponse("x", j, 2);
    expect(g.outputIds).toEqual(d.served[0]!.outputIds);
    const missing = await d.app.inject({ method: "POST", url: "/v1/completions", payload: buildVllmRequest("nope", [1], PARAMS) });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: { type: "NotFoundError", code: 404 } });
    const load = await d.app.inject({ method: "POST", url: "/v1/load_lora_adapter", payload: { lora_name: "a", lora_path: "/p" } });
    expect(load.body).toBe("Success: LoRA adapter 'a' added successfully.");
    const twice = await d.app.inject({ method: "POST", url: "/v1/load_lora_adapter", payload: { lora_name: "a", lora_path: "/p" } });
    expect(twice.statusCode).toBe(400);
    const models = await d.app.inject({ method: "GET", url: "/v1/models" });
    expect(models.json().data.map((m: { id: string }) => m.id)).toEqual(["double-model", "a"]);
  });

  it("SGLang /generate: input_ids in, output_token_logprobs out, stop token kept", () => {
    const req = buildSglangRequest("pol-v3", "base", [5, 6], PARAMS);
    expect(req).toMatchObject({
      input_ids: [5, 6],
      return_logprob: true,
      top_logprobs_num: 2,
      lora_path: "pol-v3",
      sampling_params: { max_new_tokens: 4, stop_token_ids: [151645], no_stop_trim: true, skip_special_tokens: false, sampling_seed: 1 },
    });
    expect(buildSglangRequest("base", "base", [5], PARAMS)).not.toHaveProperty("lora_path");
    const g = parseSglangResponse(
      "x",
      {
        text: "hi",
        meta_info: {
          id: "r1",
          finish_reason: { type: "stop", matched: 151645 },
          prompt_tokens: 2,
          completion_tokens: 2,
          output_token_logprobs: [
            [-0.1, 42, null],
            [-0.2, 151645, null],
          ],
          output_top_logprobs: [
            [
              [-0.1, 42, null],
              [-2.5, 7, null],
            ],
            [
              [-0.2, 151645, null],
              [-3, 8, null],
            ],
          ],
        },
      },
      2,
    );
    expect(g).toEqual({
      outputIds: [42, 151645],
      logprobs: [-0.1, -0.2],
      finishReason: "stop",
      topLogprobs: [
        [
          { id: 42, logprob: -0.1 },
          { id: 7, logprob: -2.5 },
        ],
        [
          { id: 151645, logprob: -0.2 },
          { id: 8, logprob: -3 },
        ],
      ],
    });
  });

  it("SGLang scoring reads input_token_logprobs and checks they are the ids sent", () => {
    const answer = (ids: number[]) => ({
      text: "",
      meta_info: {
        finish_reason: { type: "length", length: 1 },
        prompt_tokens: 3,
        completion_tokens: 1,
        output_token_logprobs: [[-1, 5, null]],
        input_token_logprobs: [
          [null, ids[0], null],
          [-0.5, ids[1], null],
          [-2, ids[2], null],
        ],
      },
    });
    expect(parseSglangInputLogprobs("x", answer([1, 2, 3]), [1, 2, 3])).toEqual([0, -0.5, -2]);
    expect(() => parseSglangInputLogprobs("x", answer([1, 9, 3]), [1, 2, 3])).toThrow(expect.objectContaining({ code: "AJ_ERR_REPLICA_PROTOCOL" }));
  });
});
