import type Docker from "dockerode";
import { dockerClient } from "./docker-client.ts";
import { ensureNodeBaseImage, NODE_PATH, SANDBOX_USER } from "./node-base-image.ts";

/**
 * A container that only holds a loopback-only network namespace (`NetworkMode: "none"`), which the
 * instances of one environment join (`container:<id>`) instead of each making its own: creating a
 * network namespace is about half of a runc container's start here (see bench/sandbox). The instances
 * of that one environment share its loopback; they still reach no host and no network.
 */
export class NetnsHolder {
  #container: Promise<Docker.Container> | undefined;

  constructor(private readonly labels: Record<string, string>) {}

  /** The `NetworkMode` instances join, starting the holder (again, if it died) first. */
  async networkMode(): Promise<string> {
    this.#container ??= this.#create().catch((err: unknown) => {
      this.#container = undefined;
      throw err;
    });
    const container = await this.#container;
    return `container:${container.id}`;
  }

  /** Starts the holder again when it no longer runs; later instances join its new namespace. */
  async revive(): Promise<void> {
    const container = await this.#container?.catch(() => undefined);
    if (!container) return;
    const info = await container.inspect().catch(() => undefined);
    if (info?.State.Running) return;
    if (info) await container.start().catch(() => undefined);
    else this.#container = undefined;
  }

  async remove(): Promise<void> {
    const container = await this.#container?.catch(() => undefined);
    this.#container = undefined;
    await container?.remove({ force: true }).catch(() => undefined);
  }

  async #create(): Promise<Docker.Container> {
    const container = await dockerClient().createContainer({
      Image: await ensureNodeBaseImage(),
      Entrypoint: [NODE_PATH, "-e", "setInterval(() => {}, 1 << 30)"],
      User: SANDBOX_USER,
      Labels: { ...this.labels, "agentjet.role": "netns" },
      HostConfig: {
        NetworkMode: "none",
        ReadonlyRootfs: true,
        CapDrop: ["ALL"],
        SecurityOpt: ["no-new-privileges"],
        Memory: 64 * 1024 * 1024,
        MemorySwap: 64 * 1024 * 1024,
        NanoCpus: 100_000_000,
        PidsLimit: 8,
      },
    });
    try {
      await container.start();
    } catch (err) {
      await container.remove({ force: true }).catch(() => undefined);
      throw err;
    }
    return container;
  }
}
