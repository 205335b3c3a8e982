/** The tracker (every call recorded to `run.db`) and the record of a call, as kept and as read back from a row. */
export type { CallRecord, TrackedCall } from "./call-record.ts";
export { fromCallRow, type CallRow } from "./call-rows.ts";
export { RecordingFailedError } from "./errors.ts";
export { createTracker, type Tracker } from "./tracker.ts";
