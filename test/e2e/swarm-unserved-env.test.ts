import { describe, expect, it } from "vitest";
import { waitFor } from "./fixtures/scripted-swarm.ts";
import { spawnClient } from "./fixtures/spawn-client.ts";
import { twoEnvSwarm } from "./fixtures/two-env-swarm.ts";

const suite = twoEnvSwarm();

// Regression: when the only client that could run one environment of the mix died, its episodes waited
// in the queue, the batches holding them never finished, and training stopped with nothing said (the
// server's log and /v1/engine/status looked like a healthy idle run).
describe("the only client of one environment of the mix is killed, and another joins late", () => {
  it("never routes that environment elsewhere, says what waits and why, and goes on with the quotas once a client for it joins", { timeout: 180_000 }, async () => {
    const batches = 3;
    const { countUp, relay, children } = suite;
    const swarm = await suite.start({
      batchTasks: 4,
      groupSize: 2,
      maxBatches: batches,
      leaseMs: 1500,
      heartbeatMs: 200,
      // Long enough that a client connecting a little after the other is not reported as missing.
      waitingReportMs: 5000,
      delayMs: 40,
    });
    const store = swarm.app.agentjet.store;
    const spawn = (clientId: string, envs: string[]) => {
      const c = spawnClient({ server: swarm.url, clientId, envs, concurrency: 2, token: swarm.token });
      children.push(c);
      return c;
    };
    const connected = (id: string) => swarm.events.some((e) => e.type === "client" && e.clientId === id && e.status === "connected");
    const onlyCountUp = spawn("only-count-up", ["count-up"]);
    const onlyRelay = spawn("only-relay", ["relay"]);
    await waitFor(() => connected("only-count-up") && connected("only-relay"), 60_000, "both clients to connect");
    await waitFor(() => store.list({ state: "claimed" }).some((e) => e.clientId === "only-relay"), 60_000, "relay episodes on their client");
    onlyRelay.child.kill("SIGKILL");

    const waiting = () => swarm.events.flatMap((e) => (e.type === "env-waiting" ? [e] : []));
    await waitFor(() => waiting().length > 0, 30_000, `relay to be reported as waiting (count-up client said:\n${onlyCountUp.output()})`);
    expect(waiting()).toHaveLength(1);
    const [report] = waiting();
    expect(report).toMatchObject({ env: "relay" });
    expect(report!.queued).toBeGreaterThan(0);
    expect(report!.message).toContain("no connected client can run relay@");
    expect(report!.message).toContain("'only-relay', which could, is gone");
    expect(report!.message).toContain("training waits for them");
    expect(report!.message).toContain("agentjet client --envs relay");
    expect(swarm.scheduler.waiting()).toMatchObject([{ env: "relay" }]);
    // count-up went on meanwhile, but no batch finished without its relay share.
    const batchReports = () => swarm.events.flatMap((e) => (e.type === "batch" ? [e.batch] : []));
    for (const b of batchReports()) expect(b.filled).toEqual({ "count-up": 2, relay: 2 });

    spawn("late-relay", ["relay"]);
    await waitFor(() => swarm.events.some((e) => e.type === "env-served" && e.env === "relay"), 60_000, "the late relay client to be said");
    expect(swarm.scheduler.waiting()).toEqual([]);
    await waitFor(() => batchReports().length >= batches, 120_000, "every batch");
    for (const b of batchReports()) {
      expect(b.quotas).toEqual({ "count-up": 2, relay: 2 });
      expect(b.filled).toEqual(b.quotas);
    }
    // Routing: every episode ran on a client that announced its environment.
    const ranOn = { "count-up": new Set<string>(), relay: new Set<string>() };
    for (const { episode } of swarm.ended.filter((e) => !e.episode.eval)) ranOn[episode.env as "count-up" | "relay"].add(episode.clientId ?? "");
    expect([...ranOn["count-up"]]).toEqual(["only-count-up"]);
    expect([...ranOn.relay].filter((id) => id !== "only-relay" && id !== "late-relay")).toEqual([]);
    expect(ranOn.relay.has("late-relay")).toBe(true);
    expect(waiting()).toHaveLength(1);
  });
});
