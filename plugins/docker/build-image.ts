import { readdir } from "node:fs/promises";
import { ImageBuildError } from "../errors.ts";
import { dockerClient } from "./docker-client.ts";

interface BuildEvent {
  stream?: string;
  error?: string;
  errorDetail?: { message?: string };
}

/** Builds `context` (a folder) into `tag` with the classic builder; never pulls. Progress lines go to `onProgress`. */
export async function buildImage(opts: {
  context: string;
  tag: string;
  dockerfile?: string;
  buildArgs?: Record<string, string>;
  onProgress?: (line: string) => void;
}): Promise<void> {
  const docker = dockerClient();
  // Without an engine the build request fails while its context is still being packed, and the packer's
  // error (the caller removes the context folder) would crash the process: ask first.
  try {
    await docker.ping();
  } catch (err) {
    throw new ImageBuildError(`cannot build ${opts.tag}: no Docker engine answers (${errorText(err)}); start dockerd, or point DOCKER_HOST at an engine`, err);
  }
  // Top-level names only: the packer walks folders itself and keeps their modes (e.g. /tmp's 1777).
  const src = await readdir(opts.context);
  let stream: NodeJS.ReadableStream;
  try {
    stream = await docker.buildImage(
      { context: opts.context, src },
      { t: opts.tag, dockerfile: opts.dockerfile ?? "Dockerfile", buildargs: opts.buildArgs ?? {}, rm: true, forcerm: true },
    );
  } catch (err) {
    throw new ImageBuildError(`cannot start building ${opts.tag}: ${String(err)}`, err);
  }
  const errors: string[] = [];
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err: Error | null) => (err ? reject(new ImageBuildError(`building ${opts.tag} failed: ${err.message}`, err)) : resolve()),
      (event: BuildEvent) => {
        if (event.error) errors.push(event.errorDetail?.message ?? event.error);
        const line = event.stream?.trimEnd();
        if (line) opts.onProgress?.(line);
      },
    );
  });
  if (errors.length > 0) throw new ImageBuildError(`building ${opts.tag} failed: ${errors.join("; ")}${explainBuildError(errors.join("\n"))}`);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Advice for a build error a plugin author can fix: the offline base images have no shell, so `RUN` cannot work. */
function explainBuildError(text: string): string {
  if (!/\/bin\/sh.*no such file|no such file.*\/bin\/sh/i.test(text)) return "";
  return (
    ". The base images (AGENTJET_NODE_BASE, AGENTJET_PYTHON_BASE) are FROM scratch and have no shell, so a RUN line cannot run. " +
    "Build with COPY only (ARG AGENTJET_NODE_BASE / FROM ${AGENTJET_NODE_BASE} / COPY agentjet/entry.mjs /app/entry.mjs / " +
    'CMD ["/app/entry.mjs"]), or build an image with the runtime you need yourself and name it in the manifest\'s docker.image ' +
    "(see docs/environment-manifest.md)"
  );
}
