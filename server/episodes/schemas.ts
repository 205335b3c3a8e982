import { z } from "zod";

/** Wire JSON of the episode routes (camelCase, the domain's own shape). Every field is bounded. */

/** Largest `metadata` (on register and end), as JSON text. */
export const MAX_METADATA_BYTES = 32 * 1024;
/** Deepest nesting of objects and arrays inside `metadata`. */
export const MAX_METADATA_DEPTH = 16;
const MAX_ID = 256;
const MAX_AGENTS = 64;

const Id = z.string().min(1).max(MAX_ID);

/** How many containers deep `value` nests ({} is 1, a scalar 0); stops counting past `limit`. Iterative, so any depth is safe. */
function depthOf(value: unknown, limit: number): number {
  let level: unknown[] = [value];
  for (let depth = 0; ; depth++) {
    const containers = level.filter((v): v is object => v !== null && typeof v === "object");
    if (containers.length === 0 || depth > limit) return depth;
    level = [];
    for (const c of containers) for (const v of Object.values(c)) level.push(v);
  }
}

/** Free-form JSON the caller attaches to an episode: an object, at most MAX_METADATA_DEPTH deep. Size is checked by `metadataBytes`. */
export const Metadata = z
  .record(z.string(), z.unknown())
  .refine((m) => depthOf(m, MAX_METADATA_DEPTH) <= MAX_METADATA_DEPTH, `nests deeper than ${MAX_METADATA_DEPTH} levels`);

/** The JSON size of metadata, for the 413 past MAX_METADATA_BYTES. */
export function metadataBytes(metadata: Record<string, unknown>): number {
  return Buffer.byteLength(JSON.stringify(metadata));
}

const Binding = z.object({ kind: z.enum(["policy", "frozen"]), target: Id });

export const RegisterBodySchema = z.object({
  episodeId: z.string().min(1).max(200).optional(),
  taskId: Id,
  env: Id,
  agents: z
    .record(Id, Binding)
    .refine((a) => Object.keys(a).length > 0, "at least one agent")
    .refine((a) => Object.keys(a).length <= MAX_AGENTS, `at most ${MAX_AGENTS} agents`),
  eval: z.boolean().optional(),
  metadata: Metadata.optional(),
});

export const ClaimBodySchema = z.object({ episodeId: Id.optional(), clientId: z.string().min(1).max(128).optional() });

export const EndBodySchema = z.object({
  rewards: z
    // Any JSON number (1e999 parses to Infinity): the store's reward rule refuses a non-finite one and
    // aborts the episode as a protocol failure (422), as it does a reward outside the declared range.
    .record(Id, z.custom<number>((v) => typeof v === "number", "expected a number"))
    .refine((r) => Object.keys(r).length <= MAX_AGENTS, `at most ${MAX_AGENTS} rewards`),
  metadata: Metadata.optional(),
});

export const AbortBodySchema = z.object({
  reason: z.object({ kind: z.string().min(1).max(MAX_ID), message: z.string().max(8192) }),
});

export const EpisodeParamsSchema = z.object({ id: Id });
export const ListQuerySchema = z.object({ state: z.enum(["registered", "claimed", "ended", "aborted"]).optional() });

/** `POST /v1/episodes/begin`: a client-driven episode (register + claim in one). */
export const BeginBodySchema = z.object({
  taskId: z.string().min(1).max(200),
  env: z.string().min(1).max(200).optional(),
  groupId: z.string().min(1).max(200).optional(),
  agents: z.record(z.string().min(1).max(100), Binding).refine((a) => Object.keys(a).length > 0, "at least one agent").optional(),
  eval: z.boolean().optional(),
  metadata: Metadata.optional(),
});
