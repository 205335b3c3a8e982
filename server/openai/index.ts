/** What routes outside this folder share with the OpenAI routes: errors in OpenAI's shape, body parsing, JSON masks. */
export { conflict, HttpError, toErrorBody, unauthorized } from "./errors.ts";
export { createJsonMask, createToolCallMask, toJsonGrammar, type Grammar } from "./json-mask.ts";
export { parseBody } from "./parse-body.ts";
