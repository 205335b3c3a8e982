import { dockerAvailable } from "../../plugins/index.ts";

export { sourceImageTag } from "../../plugins/index.ts";

/** Deletes a local docker image by tag; false when there is no engine or no such image. */
export async function removeImage(tag: string): Promise<boolean> {
  if (!(await dockerAvailable())) return false;
  const { default: Docker } = await import("dockerode");
  try {
    await new Docker().getImage(tag).remove();
    return true;
  } catch {
    return false;
  }
}
