/** The record of a call, as kept and as read back from a `run.db` row. `createTracker` (a writer thread) is server/index.ts's. */
export type { CallRecord, TrackedCall } from "./call-record.ts";
export { fromCallRows, withLeftOut, type CallRow } from "./read-call-rows.ts";
export { CallRowsIncompleteError, RecordingFailedError } from "./errors.ts";
export type { Tracker } from "./tracker.ts";
