import { describe, expect, it } from "vitest";
import { parseWarmBodies } from "../../../server/openai/warm-schemas.ts";
import { warmKeySchema } from "../../../server/episodes/keys.ts";

describe("start-up warm-up of the request schemas", () => {
  // A body that fails stops zod short of the schemas past its error, which would then compile in a request again.
  it("parses every warm-up body (each reaches the nested schemas it is there for)", () => {
    expect(parseWarmBodies()).toEqual([true, true, true, true]);
    expect(warmKeySchema()).toBe(true);
  });
});
