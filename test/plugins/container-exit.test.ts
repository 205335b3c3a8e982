import { afterAll, beforeAll, expect, it } from "vitest";
import { oomEventSince, watchExit } from "../../plugins/docker/container-exit.ts";
import { dockerClient } from "../../plugins/docker/docker-client.ts";
import { NODE_PATH } from "../../plugins/docker/node-base-image.ts";
import { ensureNodeBaseImage } from "../../plugins/index.ts";
import { describeDocker } from "../helpers/docker.ts";

// Why a container exited, as the engine reports it: its OOMKilled flag, or an `oom` event that came after
// the exit (gVisor on a loaded machine), against a container killed by `docker kill`.
describeDocker("container exits", () => {
  let image: string;
  const made: string[] = [];
  beforeAll(async () => {
    image = await ensureNodeBaseImage();
  });
  afterAll(async () => {
    await Promise.all(made.map((id) => dockerClient().getContainer(id).remove({ force: true }).catch(() => {})));
  });

  async function start(script: string) {
    const container = await dockerClient().createContainer({
      Image: image,
      Entrypoint: [NODE_PATH, "-e", script],
      HostConfig: { Memory: 64 * 1024 * 1024, MemorySwap: 64 * 1024 * 1024, NetworkMode: "none" },
    });
    made.push(container.id);
    const exited = watchExit(container);
    await container.start();
    return { container, exited };
  }

  it("a container over its memory limit is an oom, and the engine has an oom event for it", async () => {
    const { container, exited } = await start("const h = []; for (;;) h.push(Buffer.alloc(8 * 1024 * 1024, 1));");
    expect(await exited).toMatchObject({ kind: "oom", message: expect.stringContaining("exit 137") });
    const info = await container.inspect();
    expect(await oomEventSince(container.id, info.State.StartedAt, 2_000)).toBe(true);
  });

  it("a container killed by docker kill (exit 137, no oom event) is a crash", async () => {
    const { container, exited } = await start("setInterval(() => {}, 1000);");
    await container.kill();
    expect(await exited).toEqual({ kind: "crash", message: "the container exited with code 137" });
    const info = await container.inspect();
    expect(await oomEventSince(container.id, info.State.StartedAt, 300)).toBe(false);
  });
});
