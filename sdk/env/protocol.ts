import { z } from "zod";

/**
 * The environment protocol: the one home of the JSON that passes between the host and an environment
 * instance, whichever sandbox (isolated-vm or Docker) the instance runs in. Both sides validate with these.
 */

export const EnvMessageSchema = z.object({
  role: z.enum(["system", "user"]).describe("Who speaks: the environment's instructions (`system`) or its message to the agent (`user`)"),
  content: z.string().describe("The text"),
});
export type EnvMessage = z.infer<typeof EnvMessageSchema>;

/** One item of an environment's dataset. `data` is the environment's own payload (a problem, a seed...). */
export const TaskSchema = z.object({
  id: z.string().min(1).describe("Unique within the split; runs and reports name tasks by it"),
  split: z.string().default("train").describe("The split the task belongs to"),
  data: z.unknown().describe("The environment's own payload (a problem, a seed, a board...)"),
  /**
   * The seats of this task when they differ per task (werewolves deals roles from the task's seed);
   * the manifest's `agents` otherwise.
   */
  agents: z
    .array(z.object({ id: z.string().min(1), role: z.string().min(1) }))
    .optional()
    .describe("The seats of this task when they differ per task; the manifest's `agents` otherwise"),
});
export type Task = z.infer<typeof TaskSchema>;

/**
 * The shape a reply must take, when the environment knows it: a JSON schema the agent loop passes to the
 * model as `response_format: { type: "json_schema" }` (the embedded engine masks decoding to it; vLLM and
 * SGLang guide decoding; a frozen OpenAI-compatible endpoint gets it as is). An `enum` of the legal moves
 * keeps even an untrained policy to legal moves.
 */
export const ResponseFormatSchema = z.object({
  type: z.literal("json_schema").describe("The only kind for now: the reply is one JSON value matching `schema`"),
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).describe("A name for the schema (OpenAI's `json_schema.name`: letters, digits, `_`, `-`, at most 64)"),
  schema: z.record(z.string(), z.unknown()).describe("The JSON schema of the reply"),
});
export type ResponseFormat = z.infer<typeof ResponseFormatSchema>;

/** What one agent sees when it is its turn: messages to append to that agent's own conversation. */
export const ObservationSchema = z.object({
  messages: z.array(EnvMessageSchema).min(1).describe("Appended to the agent's conversation; at least one"),
  fresh: z
    .boolean()
    .optional()
    .describe(
      "`true`: `messages` replace the agent's conversation instead of extending it (a self-contained observation, e.g. for a model with a small context). Absent: false",
    ),
  responseFormat: ResponseFormatSchema.optional().describe(
    "The shape the reply must take (a JSON schema; its `enum`s name the legal moves); the default agent loop sends it as `response_format`. Absent: free text",
  ),
});
export type Observation = z.infer<typeof ObservationSchema>;

/**
 * The reply to `reset` and to every `step`. `observations` holds exactly the agents whose turn it is
 * (one, several in turn, or several at once). When `done`, `rewards` names a reward per agent.
 */
export const TurnSchema = z.object({
  observations: z
    .record(z.string(), ObservationSchema)
    .describe("Agent id -> what it sees now; exactly the agents that must act next (empty when done)"),
  done: z
    .boolean()
    .describe("`false`: the episode goes on, and the agents in `observations` answer with the next step; `true`: it is over"),
  rewards: z
    .record(z.string(), z.number().finite())
    .optional()
    .describe("Agent id -> reward, inside the manifest's `reward` range; when done, one for every agent the episode seats except the built-in players (else the turn is a protocol failure)"),
  info: z.record(z.string(), z.unknown()).optional().describe("Free-form details for logs and reports (e.g. `correct`)"),
});
export type Turn = z.infer<typeof TurnSchema>;

export const ResetRequestSchema = z.object({
  task: TaskSchema.describe("The task this episode plays"),
  seed: z.number().int().describe("The episode's seed: the same task, seed and actions must give the same turns"),
  builtinAgents: z
    .array(z.string())
    .default([])
    .describe("Agents the environment plays itself with its built-in (rule-based) players; never asked to act"),
});
export type ResetRequest = z.infer<typeof ResetRequestSchema>;

/** Actions are the assistant text of each agent that was asked to act. */
export const StepRequestSchema = z.object({
  actions: z
    .record(z.string(), z.string())
    .describe("Agent id -> its reply, for every agent of the last turn's `observations`; any text, malformed or not"),
});
export type StepRequest = z.infer<typeof StepRequestSchema>;

export const GenerateTasksRequestSchema = z.object({
  split: z.string().describe("A split the manifest declares as `{ generate: N }`"),
  seed: z.number().int().describe("Same seed, same tasks"),
  count: z.number().int().positive().describe("How many tasks to make (the split's N)"),
});
export type GenerateTasksRequest = z.infer<typeof GenerateTasksRequestSchema>;

export const SolveRequestSchema = z.object({
  task: TaskSchema.describe("The task being played"),
  agent: z.string().describe("The agent to answer for"),
  messages: z
    .array(z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() }))
    .describe("That agent's conversation so far"),
});
export type SolveRequest = z.infer<typeof SolveRequestSchema>;

/**
 * One call of a `batch`: an episode's op, by the episode's key within the instance (an instance serving
 * several episodes at once keeps each one's state under its key). A `reset` may name its task by index
 * into the batch's `tasks` instead of carrying it, so that a group of episodes on one task sends it once.
 */
export const BatchCallSchema = z.object({
  episode: z.string(),
  op: z.enum(["reset", "step", "close", "ping"]),
  params: z.record(z.string(), z.unknown()).optional(),
  taskIndex: z.number().int().min(0).optional(),
});
export type BatchCall = z.infer<typeof BatchCallSchema>;

export const BatchRequestSchema = z.object({ tasks: z.array(TaskSchema).default([]), calls: z.array(BatchCallSchema) });
export type BatchRequest = z.infer<typeof BatchRequestSchema>;

/** The result of a `batch`: one envelope per call, in order (a call that threw fails alone). */
export const BatchReplySchema = z.array(
  z.union([
    z.object({ ok: z.literal(true), result: z.unknown() }),
    z.object({ ok: z.literal(false), error: z.object({ message: z.string(), stack: z.string().optional() }) }),
  ]),
);
export type BatchReply = z.infer<typeof BatchReplySchema>;

/** Host -> instance request envelope. One request in flight per instance. */
export const HostRequestSchema = z.discriminatedUnion("op", [
  z.object({ id: z.number().int(), op: z.literal("reset"), params: ResetRequestSchema }),
  z.object({ id: z.number().int(), op: z.literal("step"), params: StepRequestSchema }),
  z.object({ id: z.number().int(), op: z.literal("close"), params: z.object({}).optional() }),
  z.object({ id: z.number().int(), op: z.literal("tasks"), params: GenerateTasksRequestSchema }),
  z.object({ id: z.number().int(), op: z.literal("solve"), params: SolveRequestSchema }),
  z.object({ id: z.number().int(), op: z.literal("ping"), params: z.object({}).optional() }),
  z.object({ id: z.number().int(), op: z.literal("batch"), params: BatchRequestSchema }),
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
