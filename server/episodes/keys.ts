import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";

const PREFIX = "sk-aj-";

/** What an episode key names. `attempt` ties it to one claim: after a reclaim the old keys stop working. */
export interface KeyPayload {
  episodeId: string;
  agentId: string;
  /** "policy" agents are served by an engine and trained; "frozen" ones are forwarded, never trained. */
  kind: "policy" | "frozen";
  /** The policy or frozen model name. */
  target: string;
  attempt: number;
  /** Expiry, ms since the epoch. */
  exp: number;
}

/** Far above any key this server signs (ids are bounded); longer strings are refused unread. */
const MAX_KEY_LENGTH = 4096;

/** Bytes of `text` when it is exactly their unpadded base64url spelling; null otherwise. */
function decodeCanonical(text: string): Buffer | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const bytes = Buffer.from(text, "base64url");
  return bytes.toString("base64url") === text ? bytes : null;
}

const PayloadSchema = z.strictObject({
  e: z.string().min(1),
  a: z.string().min(1),
  k: z.enum(["policy", "frozen"]),
  t: z.string().min(1),
  n: z.number().int().min(0),
  x: z.number().int(),
});

/** Parses a key payload once (at start-up): zod compiles the schema's fast path on its first parse, which the first call of a server's first episode paid. */
export function warmKeySchema(): boolean {
  return PayloadSchema.safeParse({ e: "e", a: "a", k: "policy", t: "t", n: 0, x: 0 }).success;
}

export type VerifyResult = { kind: "ok"; payload: KeyPayload } | { kind: "invalid" } | { kind: "expired"; payload: KeyPayload };

export interface KeySigner {
  sign(payload: KeyPayload): string;
  verify(key: string, now?: number): VerifyResult;
}

/** A random secret, for servers started without `keySecret` / `$AGENTJET_KEY_SECRET`. */
export function generateKeySecret(): string {
  return randomBytes(32).toString("base64url");
}

/** Episode keys: `sk-aj-` + base64url(JSON payload) + "." + base64url(HMAC-SHA256(payload)). */
export function createKeySigner(secret: string): KeySigner {
  const mac = (body: string): Buffer => createHmac("sha256", secret).update(body).digest();
  return {
    sign(p) {
      const body = Buffer.from(
        JSON.stringify({ e: p.episodeId, a: p.agentId, k: p.kind, t: p.target, n: p.attempt, x: p.exp }),
      ).toString("base64url");
      return `${PREFIX}${body}.${mac(body).toString("base64url")}`;
    },
    verify(key, now = Date.now()) {
      if (key.length > MAX_KEY_LENGTH || !key.startsWith(PREFIX)) return { kind: "invalid" };
      const parts = key.slice(PREFIX.length).split(".");
      if (parts.length !== 2) return { kind: "invalid" };
      const [body, sigText] = parts as [string, string];
      // Node's base64url decoder skips characters outside the alphabet and ignores trailing bits, so
      // many strings decode to the same bytes: only the one canonical spelling of each part is a key.
      const payloadBytes = decodeCanonical(body);
      const sig = decodeCanonical(sigText);
      if (payloadBytes === null || payloadBytes.length === 0 || sig === null) return { kind: "invalid" };
      const expected = mac(body);
      if (sig.length !== expected.length || !timingSafeEqual(sig, expected)) return { kind: "invalid" };
      let raw: unknown;
      try {
        raw = JSON.parse(payloadBytes.toString("utf8"));
      } catch {
        return { kind: "invalid" };
      }
      const parsed = PayloadSchema.safeParse(raw);
      if (!parsed.success) return { kind: "invalid" };
      const d = parsed.data;
      const payload: KeyPayload = { episodeId: d.e, agentId: d.a, kind: d.k, target: d.t, attempt: d.n, exp: d.x };
      return d.x <= now ? { kind: "expired", payload } : { kind: "ok", payload };
    },
  };
}
