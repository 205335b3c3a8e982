import { describe, it } from "vitest";
import { dockerAvailable } from "../../plugins/index.ts";

/** Asked once per test file: does a Docker engine answer? */
const available = await dockerAvailable(3_000);
const required = process.env.AGENTJET_REQUIRE_DOCKER === "1";

/**
 * A describe block for tests that need a Docker engine. Runs when an engine answers; otherwise skips
 * loudly (a warning line names the suite), or fails when AGENTJET_REQUIRE_DOCKER=1 (CI).
 */
export function describeDocker(name: string, fn: () => void): void {
  if (available) {
    describe(name, fn);
    return;
  }
  if (required) {
    describe(name, () => {
      it("needs a Docker engine", () => {
        throw new Error("AGENTJET_REQUIRE_DOCKER=1 but no Docker engine answers (is dockerd running? DOCKER_HOST?)");
      });
    });
    return;
  }
  console.warn(`\n!!! SKIPPED "${name}": no Docker engine answers. Start dockerd (or set DOCKER_HOST) to run it.\n`);
  describe.skip(name, fn);
}
