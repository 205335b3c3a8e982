import Docker from "dockerode";

let client: Docker | undefined;

/** The engine named by DOCKER_HOST, or the local socket. One client per process. */
export function dockerClient(): Docker {
  client ??= new Docker();
  return client;
}

/** Whether a Docker engine answers a ping within `timeoutMs`. */
export async function dockerAvailable(timeoutMs = 2_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      dockerClient()
        .ping()
        .then(() => true)
        .catch(() => false),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether the engine lists `runtime` among its OCI runtimes (`docker info`; runc always is). */
export async function containerRuntimeRegistered(runtime: string): Promise<boolean> {
  const info = (await dockerClient().info()) as { Runtimes?: Record<string, unknown> };
  return runtime in (info.Runtimes ?? {});
}
