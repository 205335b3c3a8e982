import { createRequire } from "node:module";
import { endianness } from "node:os";

/**
 * A long string made on another thread, received on the event loop without a copy: the thread writes its
 * characters into shared memory (Latin-1 bytes, or UTF-16 units), and the event loop makes a string whose
 * characters are that memory (`native/external-string.c`, a Node-API addon built by `npm ci`).
 *
 * Why: a 4 MB string received any other way (a structured clone, `Buffer#toString`) is one allocation of
 * 4 MB on the event loop, and writing fresh pages costs far more than copying: 5-12 ms for 4 MB on these
 * machines, every request (the engine gives a large string's pages back once it is collected). The
 * thread's memory was written there, so the event loop touches none of it.
 *
 * `externalString` is null where the addon was not built (no compiler at install) or the machine is
 * big-endian: callers then let the string cross as it did (a structured clone).
 */
export type ExternalString = (view: Uint8Array | Uint16Array) => string;

function load(): ExternalString | null {
  if (endianness() !== "LE" || process.env.AGENTJET_NO_NATIVE === "1") return null;
  try {
    const addon = createRequire(import.meta.url)("./native/build/Release/external_string.node") as { externalString: ExternalString };
    return (view) => {
      // memory that could be detached (an ArrayBuffer moved to another thread) would be freed under the string
      if (!(view.buffer instanceof SharedArrayBuffer)) throw new TypeError("externalString takes a view of a SharedArrayBuffer");
      return addon.externalString(view);
    };
  } catch {
    return null;
  }
}

export const externalString: ExternalString | null = load();
