import { dockerClient } from "./docker-client.ts";

/** The only network a container may join: internal, so nothing routes out of it. */
export const INTERNAL_NETWORK = "agentjet-internal";

export async function ensureInternalNetwork(): Promise<void> {
  const docker = dockerClient();
  const existing = await docker.listNetworks({ filters: { name: [INTERNAL_NETWORK] } });
  if (existing.some((n) => n.Name === INTERNAL_NETWORK)) return;
  try {
    await docker.createNetwork({ Name: INTERNAL_NETWORK, Internal: true, CheckDuplicate: true });
  } catch (err) {
    // Another process created it in between.
    if (!/already exists/i.test(String(err))) throw err;
  }
}
