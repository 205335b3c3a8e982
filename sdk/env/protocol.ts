import { z } from "zod";

/**
 * The environment protocol: the one home of the JSON that passes between the host and an environment
 * instance, whichever sandbox (isolated-vm or Docker) the instance runs in. Both sides validate with these.
 */

export const EnvMessageSchema = z.object({
  role: z.enum(["system", "user"]),
  content: z.string(),
});
export type EnvMessage = z.infer<typeof EnvMessageSchema>;

/** One item of an environment's dataset. `data` is the environment's own payload (a problem, a seed...). */
export const TaskSchema = z.object({
  id: z.string().min(1),
  split: z.string().default("train"),
  data: z.unknown(),
  /**
   * The seats of this task when they differ per task (werewolves deals roles from the task's seed);
   * the manifest's `agents` otherwise.
   */
  agents: z.array(z.object({ id: z.string().min(1), role: z.string().min(1) })).optional(),
});
export type Task = z.infer<typeof TaskSchema>;

/** What one agent sees when it is its turn: messages to append to that agent's own conversation. */
export const ObservationSchema = z.object({
  messages: z.array(EnvMessageSchema).min(1),
});
export type Observation = z.infer<typeof ObservationSchema>;

/**
 * The reply to `reset` and to every `step`. `observations` holds exactly the agents whose turn it is
 * (one, several in turn, or several at once). When `done`, `rewards` names a reward per agent.
 */
export const TurnSchema = z.object({
  observations: z.record(z.string(), ObservationSchema),
  done: z.boolean(),
  rewards: z.record(z.string(), z.number().finite()).optional(),
  info: z.record(z.string(), z.unknown()).optional(),
});
export type Turn = z.infer<typeof TurnSchema>;

export const ResetRequestSchema = z.object({
  task: TaskSchema,
  seed: z.number().int(),
  /** Agents the environment plays itself with its built-in (rule-based) players; never asked to act. */
  builtinAgents: z.array(z.string()).default([]),
});
export type ResetRequest = z.infer<typeof ResetRequestSchema>;

/** Actions are the assistant text of each agent that was asked to act. */
export const StepRequestSchema = z.object({ actions: z.record(z.string(), z.string()) });
export type StepRequest = z.infer<typeof StepRequestSchema>;

export const GenerateTasksRequestSchema = z.object({
  split: z.string(),
  seed: z.number().int(),
  count: z.number().int().positive(),
});
export type GenerateTasksRequest = z.infer<typeof GenerateTasksRequestSchema>;

export const SolveRequestSchema = z.object({
  task: TaskSchema,
  agent: z.string(),
  messages: z.array(z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() })),
});
export type SolveRequest = z.infer<typeof SolveRequestSchema>;

/** Host -> instance request envelope. One request in flight per instance. */
export const HostRequestSchema = z.discriminatedUnion("op", [
  z.object({ id: z.number().int(), op: z.literal("reset"), params: ResetRequestSchema }),
  z.object({ id: z.number().int(), op: z.literal("step"), params: StepRequestSchema }),
  z.object({ id: z.number().int(), op: z.literal("close"), params: z.object({}).optional() }),
  z.object({ id: z.number().int(), op: z.literal("tasks"), params: GenerateTasksRequestSchema }),
  z.object({ id: z.number().int(), op: z.literal("solve"), params: SolveRequestSchema }),
  z.object({ id: z.number().int(), op: z.literal("ping"), params: z.object({}).optional() }),
]);
export type HostRequest = z.infer<typeof HostRequestSchema>;

/** Instance -> host reply envelope. `error` is the plugin's own failure (it threw), reported as a value. */
export const InstanceReplySchema = z.union([
  z.object({ id: z.number().int(), ok: z.literal(true), result: z.unknown() }),
  z.object({
    id: z.number().int(),
    ok: z.literal(false),
    error: z.object({ message: z.string(), stack: z.string().optional() }),
  }),
]);
export type InstanceReply = z.infer<typeof InstanceReplySchema>;
