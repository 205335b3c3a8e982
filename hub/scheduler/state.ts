import { z } from "zod";

/**
 * The scheduler's resumable state (`--resume`): where each task stream stands, the mixing ledger and the
 * next batch. It is taken at the start of the oldest unfinished batch, so a resumed run re-plans every
 * batch that had not finished.
 */
export const SchedulerStateSchema = z.object({
  version: z.literal(1),
  /** Index of the next batch to plan (the oldest unfinished one; its groups' ids carry it). */
  nextBatch: z.number().int().min(0),
  /**
   * The step each unfinished batch was mixed at, oldest first: a re-planned batch gets the same quotas
   * (its groups' ids name the same environments as `doneGroups`). Absent in older snapshots, whose
   * batches were mixed at their index.
   */
  mixSteps: z.array(z.number().int().min(0)).optional(),
  streams: z.record(z.string(), z.object({ epoch: z.number().int().min(0), position: z.number().int().min(0) })),
  ledger: z.record(z.string(), z.object({ target: z.number().min(0), given: z.number().int().min(0) })),
  evalRuns: z.number().int().min(0),
  /** Groups of the re-planned batches that had completed: their episodes wait in the sample pool, so they are not played again. */
  doneGroups: z.array(z.string()).default([]),
  /**
   * Finished episodes of groups that had not completed. Their groups are played again in full, so the
   * resumed run drops these from the sample pool.
   */
  partialEpisodes: z.array(z.string()).default([]),
});
export type SchedulerState = z.infer<typeof SchedulerStateSchema>;
/** A state as stored by an older snapshot (the newer fields may be absent). */
export type SchedulerStateInput = z.input<typeof SchedulerStateSchema>;
