import { afterEach, describe, expect, it } from "vitest";
import { DUPLICATE_SIGNAL_MS, onInterrupt } from "../../hub/cli/interrupt.ts";

const stops: Array<() => void> = [];
afterEach(() => stops.splice(0).forEach((stop) => stop()));

describe("onInterrupt", () => {
  it("stops on the first signal, ignores its duplicate, and calls onAgain for a later one", () => {
    let t = 1_000;
    const heard: string[] = [];
    stops.push(onInterrupt((s) => heard.push(`stop ${s}`), (s) => heard.push(`again ${s}`), () => t));
    process.emit("SIGINT", "SIGINT");
    t += 5; // the same Ctrl-C, forwarded by bin/agentjet.js
    process.emit("SIGINT", "SIGINT");
    t += DUPLICATE_SIGNAL_MS;
    process.emit("SIGTERM", "SIGTERM");
    expect(heard).toEqual(["stop SIGINT", "again SIGTERM"]);
  });

  it("stops listening when told to", () => {
    const before = process.listenerCount("SIGINT");
    const stop = onInterrupt(() => undefined);
    expect(process.listenerCount("SIGINT")).toBe(before + 1);
    stop();
    expect(process.listenerCount("SIGINT")).toBe(before);
  });
});
