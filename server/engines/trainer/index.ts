export { createTrainerClient, toWireSamples } from "./trainer-client.ts";
export type { TrainerClient, TrainerClientOptions } from "./trainer-client.ts";
export { buildTrainerDouble } from "./trainer-double.ts";
export type { TrainerDouble, TrainerDoubleOptions, TrainerDoubleRecord } from "./trainer-double.ts";
export { TrainerProtocolError, TrainerRequestError, TrainerUnavailableError } from "./errors.ts";
export * from "./protocol.ts";
