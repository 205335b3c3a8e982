import { HttpError } from "../openai/errors.ts";
import type { Episode } from "./episode.ts";
import { refusalError } from "./errors.ts";
import type { Done, EpisodeRefusal } from "./outcomes.ts";

/**
 * A refusal as HTTP: unknown episode 404, a refused transition (with the episode's `state`) or a duplicate
 * 409, a bad binding 400, refused rewards 422 (the episode is already aborted as `protocol`); the statuses
 * of `errors/codes.json`.
 */
export function refusalToHttp(r: EpisodeRefusal): HttpError {
  const err = refusalError(r);
  const param = r.kind === "unknown-binding" ? "agents" : r.kind === "rewards-refused" ? "rewards" : null;
  const state = r.kind === "wrong-state" ? { state: r.state } : {};
  return new HttpError(err.httpStatus ?? 500, err.code, err.message, { param, ...state, cause: err });
}

/** The episode of a store result; a refusal is thrown as its HTTP error. */
export function episodeOrHttpError(r: Done | EpisodeRefusal): Episode {
  if (r.kind === "ok") return r.episode;
  throw refusalToHttp(r);
}
