import { StorageError } from "./errors.ts";

/** Runs a write to the run directory; a failure becomes a coded `StorageError` naming the path. */
export function writeOrStop<T>(path: string, action: string, write: () => T): T {
  try {
    return write();
  } catch (err) {
    throw new StorageError(path, action, err);
  }
}

/** `writeOrStop` for asynchronous writes. */
export async function writeOrStopAsync<T>(path: string, action: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    throw err instanceof StorageError ? err : new StorageError(path, action, err);
  }
}
