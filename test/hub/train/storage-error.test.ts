import { describe, expect, it } from "vitest";
import { StorageError } from "../../../hub/train/errors.ts";
import { TrainerUnavailableError } from "../../../server/engines/trainer/errors.ts";

describe("StorageError", () => {
  it("names an errno code alone, and a coded engine error with its words", () => {
    const full = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    expect(new StorageError("/r/checkpoints/x", "write", full).message).toBe("cannot write '/r/checkpoints/x' (ENOSPC); the run stops, keeping what it wrote before");
    // A checkpoint whose weights a trainer service writes: the trainer being down said only its code.
    const down = new TrainerUnavailableError("POST http://127.0.0.1:8800/v1/save: fetch failed (ECONNREFUSED)");
    expect(new StorageError("/r/p", "save policy 'main' to", down).message).toBe(
      "cannot save policy 'main' to '/r/p' (AJ_ERR_TRAINER_UNAVAILABLE: POST http://127.0.0.1:8800/v1/save: fetch failed (ECONNREFUSED)); the run stops, keeping what it wrote before",
    );
  });
});
