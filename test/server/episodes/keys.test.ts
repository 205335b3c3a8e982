import { describe, expect, it } from "vitest";
import { createKeySigner, type KeyPayload } from "../../../server/episodes/keys.ts";

const payload: KeyPayload = { episodeId: "ep-1", agentId: "solver", kind: "policy", target: "main", attempt: 1, exp: 2_000 };

describe("episode keys", () => {
  const signer = createKeySigner("secret-a");

  it("signs and verifies a payload", () => {
    const key = signer.sign(payload);
    expect(key.startsWith("sk-aj-")).toBe(true);
    expect(signer.verify(key, 1_000)).toEqual({ kind: "ok", payload });
  });

  it("refuses expired keys", () => {
    expect(signer.verify(signer.sign(payload), 2_000).kind).toBe("expired");
  });

  it("refuses keys signed with another secret (foreign)", () => {
    expect(signer.verify(createKeySigner("secret-b").sign(payload), 1_000).kind).toBe("invalid");
  });

  it("refuses a payload edited after signing", () => {
    const key = signer.sign(payload);
    const [body, sig] = key.slice("sk-aj-".length).split(".");
    const forged = JSON.parse(Buffer.from(body!, "base64url").toString()) as Record<string, unknown>;
    forged.e = "ep-2";
    const forgedKey = `sk-aj-${Buffer.from(JSON.stringify(forged)).toString("base64url")}.${sig}`;
    expect(signer.verify(forgedKey, 1_000).kind).toBe("invalid");
  });

  it("refuses garbage", () => {
    for (const k of ["", "sk-aj-", "sk-aj-.", "sk-aj-abc", "sk-aj-abc.def", "Bearer x", "sk-ajet-abc.def", `sk-aj-${"a".repeat(5000)}.x`]) {
      expect(signer.verify(k, 1_000).kind).toBe("invalid");
    }
  });
});
