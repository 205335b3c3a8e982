import { createHash, randomBytes } from "node:crypto";

const hash = (code: string): string => createHash("sha256").update(code).digest("hex");

/**
 * One-time codes for the dashboard's printed link: the link carries a code, never the admin token, so a
 * log or a terminal scroll-back holds nothing reusable. The page trades the code for the admin token
 * once (`POST /v1/dashboard/login`); a used or expired code is worth nothing.
 */
export class LoginCodes {
  readonly #codes = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(ttlMs = 24 * 3600_000, now: () => number = Date.now) {
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  issue(): string {
    const code = `aj-login-${randomBytes(24).toString("base64url")}`;
    this.#codes.set(hash(code), this.#now() + this.#ttlMs);
    return code;
  }

  /** True once for a code this issued that has not expired; it is spent either way. */
  redeem(code: string): boolean {
    const key = hash(code);
    const expires = this.#codes.get(key);
    this.#codes.delete(key);
    for (const [k, e] of this.#codes) if (e <= this.#now()) this.#codes.delete(k);
    return expires !== undefined && expires > this.#now();
  }
}
