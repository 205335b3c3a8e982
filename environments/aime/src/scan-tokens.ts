/** What a reader makes of the start of the rest of the text: a token (null: characters skipped) and how many characters it took. */
export interface TokenStep<T> {
  token: T | null;
  length: number;
}

/**
 * Splits `s` into tokens, reading each with `next` from where the last one ended; null as soon as `next`
 * knows nothing at the start of the rest (the expression readers then give up on the whole text).
 */
export function scanTokens<T>(s: string, next: (rest: string) => TokenStep<T> | null): T[] | null {
  const out: T[] = [];
  for (let i = 0; i < s.length; ) {
    const step = next(s.slice(i));
    if (step === null) return null;
    if (step.token !== null) out.push(step.token);
    i += step.length;
  }
  return out;
}
