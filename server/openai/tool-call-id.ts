import { randomUUID } from "node:crypto";

/** A tool call's id (`call_` and 24 hex digits), as OpenAI's look; a streamed call gets it when it begins. */
export const newToolCallId = (): string => `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`;
