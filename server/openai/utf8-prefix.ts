/**
 * UTF-8 read a token at a time, for token masks over tokenizers whose byte tokens are parts of characters
 * (the embedded tokenizer's non-ASCII text): bytes split into whole characters and the start of one not
 * yet complete.
 */

/** The length of the character a lead byte begins, or 0 for a byte no character begins with. */
function charLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead < 0xe0) return 2;
  if (lead >= 0xe0 && lead < 0xf0) return 3;
  if (lead >= 0xf0 && lead < 0xf5) return 4;
  return 0;
}

const DECODER = new TextDecoder("utf-8", { fatal: true });

/** One character's bytes as text, or null when they are not one valid character (overlong, a surrogate). */
function charOf(bytes: readonly number[]): string | null {
  try {
    return DECODER.decode(Uint8Array.from(bytes));
  } catch {
    return null;
  }
}

/**
 * `bytes` as whole characters (`text`) and the bytes of a character begun and not complete (`rest`, at most
 * 3), or null when they cannot be valid UTF-8 whatever follows.
 */
export function splitUtf8(bytes: readonly number[]): { text: string; rest: number[] } | null {
  let text = "";
  let i = 0;
  while (i < bytes.length) {
    const n = charLength(bytes[i]!);
    if (n === 0) return null;
    const end = Math.min(i + n, bytes.length);
    for (let k = i + 1; k < end; k++) if ((bytes[k]! & 0xc0) !== 0x80) return null;
    if (i + n > bytes.length) {
      const rest = bytes.slice(i);
      return completionOf(rest) === null ? null : { text, rest };
    }
    const c = charOf(bytes.slice(i, i + n));
    if (c === null) return null;
    text += c;
    i += n;
  }
  return { text, rest: [] };
}

/** A character whose UTF-8 begins with `prefix` (an incomplete one), or null when none does. */
export function completionOf(prefix: readonly number[]): string | null {
  const n = charLength(prefix[0] ?? 0);
  if (n <= prefix.length) return null;
  for (const fill of [0x80, 0x90, 0xa0, 0xbf]) {
    const c = charOf([...prefix, ...Array<number>(n - prefix.length).fill(fill)]);
    if (c !== null) return c;
  }
  return null;
}

/** Whether `c`'s UTF-8 begins with `prefix`. */
export function startsWithBytes(c: string, prefix: readonly number[]): boolean {
  const b = Buffer.from(c, "utf8");
  return b.length > prefix.length && prefix.every((x, i) => b[i] === x);
}

/** The UTF-8 length of a character (a code point, one or two UTF-16 units). */
export const utf8Length = (c: string): number => Buffer.byteLength(c, "utf8");
