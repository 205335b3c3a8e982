/** Errors of the AppWorld adapter, with stable codes. Inside an episode they end it as an infrastructure failure. */
export class AppWorldError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AppWorldError";
    this.code = code;
  }
}

/** The environment server answered with a non-200 status (AppWorld: 400 before /initialize, 422 on a bad body). */
export class AppWorldHttpError extends AppWorldError {
  constructor(
    readonly endpoint: string,
    readonly status: number,
    readonly detail: string,
  ) {
    super("AJ_ERR_APPWORLD_HTTP", `AppWorld ${endpoint} answered HTTP ${status}: ${detail}`);
  }
}

/** The server's reply is not `{"output": ...}` of the expected shape, or it could not be reached. */
export class AppWorldReplyError extends AppWorldError {
  constructor(message: string, cause?: unknown) {
    super("AJ_ERR_APPWORLD_REPLY", message, { cause });
  }
}

/** The environment server did not start, or did not answer within the start-up timeout. */
export class AppWorldStartError extends AppWorldError {
  constructor(message: string) {
    super("AJ_ERR_APPWORLD_START", message);
  }
}

/** The AppWorld data folder is missing or not shaped like `appworld download data` leaves it. */
export class AppWorldDataError extends AppWorldError {
  constructor(message: string) {
    super("AJ_ERR_APPWORLD_DATA", message);
  }
}
