/**
 * The paths the run's own app serves (server/: the OpenAI routes, the episode routes, the server's
 * status), so that the service knows them while no run goes: such a request is 503 "the engine is
 * offline", any other is 404. A test checks every route of an assembled run against it.
 */
const RUN_PATHS = [/^\/v1\/(?:chat\/completions|completions|responses|models)$/, /^\/v1\/episodes(?:\/|$)/, /^\/v1\/server\/status$/];

/** Whether `url` (path and query) is a path of the run's app. */
export function isRunPath(url: string): boolean {
  const path = url.split("?", 1)[0]!;
  return RUN_PATHS.some((re) => re.test(path));
}
