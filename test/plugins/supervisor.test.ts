import { describe, expect, it } from "vitest";
import type { Driver, HostOp, Instance } from "../../plugins/instance.ts";
import { failed, ok } from "../../plugins/outcome.ts";
import type { Outcome } from "../../plugins/runtime.ts";
import { Supervisor } from "../../plugins/supervisor.ts";

/** An instance that, once killed, fails every call but still says it is alive (its exit not yet noticed). */
class FakeInstance implements Instance {
  killed = false;
  disposed = false;
  constructor(readonly n: number) {}
  get alive(): boolean {
    return !this.disposed;
  }
  async call(_op: HostOp): Promise<Outcome<unknown>> {
    return this.killed ? failed("crash", "the container exited with code 137") : ok({});
  }
  probe(): Promise<Outcome<unknown>> {
    return this.call("ping");
  }
  async dispose(): Promise<void> {
    this.disposed = true;
  }
}

function fakeDriver(): Driver & { instances: FakeInstance[] } {
  const instances: FakeInstance[] = [];
  return {
    instances,
    async start() {
      const i = new FakeInstance(instances.length);
      instances.push(i);
      return ok(i);
    },
    async close() {},
  };
}

const options = { maxInstances: 4, warm: 1, maxConcurrentStarts: 2, healthIntervalMs: 60_000, callTimeoutMs: 1_000 };

describe("Supervisor", () => {
  // Regression (issue 18, item 9): after `docker kill` a dead warm instance went to the next episode
  // (it still looked alive), so one kill cost two retries.
  it("never hands out an idle instance that died since it went idle", async () => {
    const driver = fakeDriver();
    const supervisor = new Supervisor({ driver, ...options });
    await supervisor.fill();
    driver.instances[0]!.killed = true;
    const acquired = await supervisor.acquire();
    expect(acquired.kind).toBe("ok");
    const instance = acquired.kind === "ok" ? (acquired.value as FakeInstance) : undefined;
    expect(instance?.n).not.toBe(0);
    expect(instance?.killed).toBe(false);
    expect(driver.instances[0]!.disposed).toBe(true);
    expect(supervisor.stats()).toMatchObject({ replaced: 1, failures: { crash: 1 } });
    await supervisor.close();
  });

  it("hands out a live idle instance after one probe", async () => {
    const driver = fakeDriver();
    const supervisor = new Supervisor({ driver, ...options });
    await supervisor.fill();
    const acquired = await supervisor.acquire();
    expect(acquired.kind === "ok" && (acquired.value as FakeInstance).n).toBe(0);
    expect(supervisor.stats().replaced).toBe(0);
    await supervisor.close();
  });

  // Regression (CI flake in the AppWorld kill test): a refill start that failed while an episode waited
  // for the instance cap freed its slot without waking the waiter, so the episode waited forever.
  it("wakes an episode waiting at the cap when a refill start fails", async () => {
    let release: (o: Outcome<Instance>) => void = () => undefined;
    let calls = 0;
    const driver: Driver = {
      start() {
        calls++;
        if (calls === 1) return new Promise((resolve) => (release = resolve));
        return Promise.resolve(ok(new FakeInstance(calls)));
      },
      async close() {},
    };
    const supervisor = new Supervisor({ driver, ...options, maxInstances: 1, warm: 1 });
    const filling = supervisor.fill();
    const acquiring = supervisor.acquire();
    release(failed("start-failed", "the network namespace holder was not running"));
    await filling;
    const acquired = await Promise.race([acquiring, new Promise<"stuck">((resolve) => setTimeout(() => resolve("stuck"), 2_000))]);
    expect(acquired).toMatchObject({ kind: "ok" });
    await supervisor.close();
  });
});

