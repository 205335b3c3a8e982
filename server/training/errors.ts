import { AgentJetServerError } from "../errors.ts";

/** A sample row in the pool could not be decoded (a corrupt or foreign database). */
export class PoolCorruptError extends AgentJetServerError {
  constructor(sampleId: string, detail: string) {
    super("AJ_ERR_POOL_CORRUPT", `sample '${sampleId}' in the pool is unreadable: ${detail}`);
  }
}

