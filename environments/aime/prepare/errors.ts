/** The dataset given to `env add aime --data` could not be read or mapped. */
export class AimeDataError extends Error {
  readonly code = "AJ_ERR_AIME_DATA";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AimeDataError";
  }
}
