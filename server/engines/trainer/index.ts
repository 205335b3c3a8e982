export { createTrainerClient, toWireSamples } from "./trainer-client.ts";
export type { TrainerClient, TrainerClientOptions } from "./trainer-client.ts";
export { TrainerProtocolError, TrainerRequestError, TrainerStateError, TrainerUnavailableError } from "./errors.ts";
export * from "./protocol.ts";
