import { setTimeout as sleep } from "node:timers/promises";
import { dockerAvailable } from "../../plugins/index.ts";

export { sourceImageTag } from "../../plugins/index.ts";

/**
 * Deletes a local docker image by tag; false when there is no engine or no such image. A container that
 * is still being removed (a run's instances end asynchronously) holds the image for a moment: a conflict
 * is retried for a few seconds.
 */
export async function removeImage(tag: string): Promise<boolean> {
  if (!(await dockerAvailable())) return false;
  const { default: Docker } = await import("dockerode");
  const image = new Docker().getImage(tag);
  for (let attempt = 0; ; attempt++) {
    try {
      await image.remove();
      return true;
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode !== 409 || attempt >= 20) return false;
      await sleep(250);
    }
  }
}
