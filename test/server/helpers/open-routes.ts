/** The only routes that may skip the control-plane token (both route-table tests). A new one has to be added here on purpose. */
export const OPEN_ROUTES = [
  "GET /v1/models public",
  "HEAD /v1/models public",
  "POST /v1/chat/completions episode-key",
  "POST /v1/completions episode-key",
  "POST /v1/responses episode-key",
  "GET /v1/episodes/:id/transcript episode-key",
  "HEAD /v1/episodes/:id/transcript episode-key",
];

/** A route's URL with every `:param` filled, to call it. */
export const fillParams = (url: string): string => url.replace(/:[A-Za-z]+/g, "x");

/** The training service's open routes: the run's, plus the dashboard page, its files and its one-time-code login. */
export const SERVICE_OPEN_ROUTES = [
  ...OPEN_ROUTES,
  "GET /dashboard public",
  "HEAD /dashboard public",
  "GET /dashboard/assets/:file public",
  "HEAD /dashboard/assets/:file public",
  "POST /v1/dashboard/login public",
];
