/** A response split into its thinking part and its final part. */
export interface ResponseParts {
  thinking: string;
  final: string;
  /** The response opened a thinking block and never closed it (it was cut off mid-thought). */
  unclosedThinking: boolean;
}

const OPEN = "<think>";
const CLOSE = "</think>";

/** The final part is what follows the last `</think>`; an unclosed `<think>` makes everything thinking. */
export function splitThinking(response: string): ResponseParts {
  const close = response.lastIndexOf(CLOSE);
  if (close >= 0) {
    return { thinking: response.slice(0, close), final: response.slice(close + CLOSE.length), unclosedThinking: false };
  }
  const open = response.indexOf(OPEN);
  if (open >= 0) {
    return { thinking: response.slice(open + OPEN.length), final: response.slice(0, open), unclosedThinking: true };
  }
  return { thinking: "", final: response, unclosedThinking: false };
}
