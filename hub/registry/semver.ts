/** Compares two exact semver versions (x.y.z[-pre]); a pre-release sorts before its release. */
export function compareVersions(a: string, b: string): number {
  const [coreA = "", preA] = a.split("-", 2);
  const [coreB = "", preB] = b.split("-", 2);
  const pa = coreA.split(".").map(Number);
  const pb = coreB.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  if (preA === preB) return 0;
  if (preA === undefined) return 1;
  if (preB === undefined) return -1;
  return preA < preB ? -1 : 1;
}

/** The newest release (pre-releases only when nothing else exists). */
export function pickLatest(versions: readonly string[]): string | undefined {
  const sorted = [...versions].sort(compareVersions);
  const releases = sorted.filter((v) => !v.includes("-"));
  return (releases.length ? releases : sorted).at(-1);
}
