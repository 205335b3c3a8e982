import { z } from "zod";
import { FailureKindSchema } from "../failure-kinds.ts";
import { TaskSchema } from "../env/protocol.ts";

/**
 * The swarm protocol: the one home of the JSON that passes over the WebSocket between a swarm client
 * and the scheduler. One JSON object per text frame. Both sides validate with these schemas.
 *
 * Reconnect semantics: a client keeps its `clientId` across reconnects and lists the episodes it is
 * still running in `hello.running`. Within the lease, the scheduler re-attaches them; after it, they
 * were re-queued elsewhere and the scheduler answers `cancel` for each, and any `end` for them is
 * ignored, so a retried episode never yields two results.
 */

export const SWARM_PROTOCOL_VERSION = 1;
export const SWARM_PATH = "/swarm";

/** Codes of `error` frames after which the server closes the socket and reconnecting cannot help. */
export const SWARM_FATAL_ERRORS = {
  /** The two sides speak different `SWARM_PROTOCOL_VERSION`s. */
  protocolVersion: "AJ_ERR_SWARM_PROTOCOL_VERSION",
  /** Another client, with another token, holds this client id. */
  clientIdTaken: "AJ_ERR_SWARM_CLIENT_ID_TAKEN",
} as const;

export const EnvAnnouncementSchema = z.object({
  name: z.string().min(1),
  version: z.string().min(1),
  /** Content hash of the plugin (from the lockfile, or computed from its folder). */
  hash: z.string().min(1),
  /**
   * A development version: a local plugin folder being edited (`agentjet client --env-path DIR`), whose
   * hash changes with every edit. Runs that accept development versions route to it whatever its hash.
   */
  dev: z.boolean().default(false),
});
export type EnvAnnouncement = z.infer<typeof EnvAnnouncementSchema>;

/** The code an episode ran with: its environment's hash and whether that was a development version. */
export const CodeVersionSchema = z.object({ hash: z.string().min(1), dev: z.boolean() });
export type CodeVersion = z.infer<typeof CodeVersionSchema>;

/** Why a client gave an episode up: the shared vocabulary of `sdk/failure-kinds.ts`. */
export const AbortKindSchema = FailureKindSchema;

export const AbortReasonSchema = z.object({ kind: AbortKindSchema, message: z.string() });
export type SwarmAbortReason = z.infer<typeof AbortReasonSchema>;

export const AgentAccessSchema = z.object({
  /** OpenAI-compatible base URL (ends in /v1). */
  baseUrl: z.string().min(1),
  apiKey: z.string().min(1),
  /** The policy or frozen model name to put in `model`. */
  model: z.string().min(1),
  role: z.string().min(1),
});
export type AgentAccess = z.infer<typeof AgentAccessSchema>;

export const AssignmentSchema = z.object({
  episodeId: z.string().min(1),
  env: z.object({ name: z.string(), version: z.string() }),
  task: TaskSchema,
  seed: z.number().int(),
  /** Agents the client drives, by agent id. */
  agents: z.record(z.string(), AgentAccessSchema),
  /** Agents the environment plays itself. */
  builtinAgents: z.array(z.string()),
  maxTurns: z.number().int().positive(),
  purpose: z.enum(["train", "eval"]),
  /** 0 for the first try of this episode slot, then 1, 2, ... */
  attempt: z.number().int().min(0),
});
export type Assignment = z.infer<typeof AssignmentSchema>;

export const ClientMessageSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("hello"),
    protocol: z.literal(SWARM_PROTOCOL_VERSION),
    clientId: z.string().min(1).max(128),
    envs: z.array(EnvAnnouncementSchema),
    concurrency: z.number().int().positive(),
    /** Episodes still running from before a reconnect. */
    running: z.array(z.string()).default([]),
  }),
  z.object({ type: z.literal("heartbeat"), running: z.array(z.string()) }),
  z.object({
    type: z.literal("end"),
    episodeId: z.string(),
    rewards: z.record(z.string(), z.number().finite()),
    info: z.record(z.string(), z.unknown()).default({}),
    /** The environment code the episode ran with (a `--watch` reload between episodes changes it). */
    code: CodeVersionSchema.optional(),
  }),
  z.object({ type: z.literal("abort"), episodeId: z.string(), reason: AbortReasonSchema }),
  z.object({ type: z.literal("agree_sync") }),
]);
export type ClientMessage = z.input<typeof ClientMessageSchema>;
export type ParsedClientMessage = z.infer<typeof ClientMessageSchema>;

export const ServerMessageSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("welcome"),
    clientId: z.string(),
    heartbeatMs: z.number().int().positive(),
    leaseMs: z.number().int().positive(),
    /** Of `hello.running`, the episodes the scheduler still holds for this client. */
    resumed: z.array(z.string()),
  }),
  z.object({ type: z.literal("assign"), episode: AssignmentSchema }),
  z.object({ type: z.literal("cancel"), episodeId: z.string(), reason: z.string() }),
  /** Closes the socket after it, except `ENV_MISMATCH_CODE`: the client stays connected and may re-announce. */
  z.object({ type: z.literal("error"), code: z.string(), message: z.string() }),
]);

/** The `error` code the scheduler sends when a client's environments do not all fit the run; the message has the hashes and the fix. */
export const ENV_MISMATCH_CODE = "AJ_ERR_SWARM_ENV_MISMATCH";
export type ServerMessage = z.infer<typeof ServerMessageSchema>;

/** Parses one frame; a malformed frame is a value, not a throw. */
export function parseFrame<T>(schema: z.ZodType<T>, data: string): { ok: true; message: T } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return { ok: false, error: "not JSON" };
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? { ok: true, message: parsed.data } : { ok: false, error: z.prettifyError(parsed.error) };
}
