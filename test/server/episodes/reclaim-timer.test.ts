import { afterEach, describe, expect, it, vi } from "vitest";
import { startReclaimTimer } from "../../../server/episodes/reclaim-timer.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("reclaim timer", () => {
  it("checks every min(10 s, timeout / 2) until stopped", () => {
    vi.useFakeTimers();
    let checks = 0;
    const stop = startReclaimTimer(4_000, () => (checks += 1));
    vi.advanceTimersByTime(1_999);
    expect(checks).toBe(0);
    vi.advanceTimersByTime(1);
    expect(checks).toBe(1);
    stop();
    vi.advanceTimersByTime(60_000);
    expect(checks).toBe(1);
    let slow = 0;
    const stopSlow = startReclaimTimer(120_000, () => (slow += 1));
    vi.advanceTimersByTime(30_000);
    expect(slow).toBe(3);
    stopSlow();
  });
});
