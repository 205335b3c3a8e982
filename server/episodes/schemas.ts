import { z } from "zod";

/** Wire JSON of the episode routes (camelCase, the domain's own shape). */

const Binding = z.object({ kind: z.enum(["policy", "frozen"]), target: z.string().min(1) });

export const RegisterBodySchema = z.object({
  episodeId: z.string().min(1).max(200).optional(),
  taskId: z.string().min(1),
  env: z.string().min(1),
  agents: z.record(z.string().min(1), Binding).refine((a) => Object.keys(a).length > 0, "at least one agent"),
  eval: z.boolean().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export const ClaimBodySchema = z
  .object({ episodeId: z.string().min(1).optional(), clientId: z.string().min(1).optional() })
  .default({});

export const EndBodySchema = z.object({
  rewards: z.record(z.string(), z.number().finite()),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export const AbortBodySchema = z.object({
  reason: z.object({ kind: z.string().min(1), message: z.string() }),
});

export const EpisodeParamsSchema = z.object({ id: z.string().min(1) });
export const ListQuerySchema = z.object({ state: z.enum(["registered", "claimed", "ended", "aborted"]).optional() });
