import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { buildScratchImage } from "../../plugins/docker/scratch-image.ts";
import { ImageBuildError } from "../../plugins/errors.ts";

// No engine at this address (the client reads DOCKER_HOST when it is first made, below).
process.env.DOCKER_HOST = "unix:///nonexistent/agentjet-test/docker.sock";

it("building an image without a Docker engine fails with an error that says so, and the process lives on", async () => {
  const built = buildScratchImage({
    tag: "agentjet-test/never-built:0",
    fill: async (rootfs) => {
      const { mkdir } = await import("node:fs/promises");
      await mkdir(rootfs, { recursive: true });
      await writeFile(join(rootfs, "hello.txt"), "hello");
    },
    env: "A=1",
    entrypoint: "/hello.txt",
  });
  await expect(built).rejects.toBeInstanceOf(ImageBuildError);
  await expect(built).rejects.toThrow(/no Docker engine answers \(connect ENOENT \/nonexistent\/agentjet-test\/docker\.sock\); start dockerd, or point DOCKER_HOST at an engine/);
  // An unhandled error of the context packer (the folder is removed under it) would fail the run here.
  await new Promise((r) => setTimeout(r, 300));
});
