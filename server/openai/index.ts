/** What routes outside this folder share with the OpenAI routes: errors in OpenAI's shape, body parsing, JSON masks. */
export { HttpError, toErrorBody } from "./errors.ts";
export { createJsonMask, toJsonGrammar, type Grammar } from "./json-mask.ts";
export { parseBody } from "./parse-body.ts";
