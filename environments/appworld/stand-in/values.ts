/** The values of the stand-in's code subset (`interpreter.ts`), shared with its formatter. */
export type Value = null | boolean | number | string | Value[] | { [k: string]: Value } | Callable | Namespace;
export interface Callable {
  kind: "callable";
  name: string;
  call(args: Value[], kwargs: Record<string, Value>): Value;
}
export interface Namespace {
  kind: "namespace";
  name: string;
  members: Record<string, Value>;
}
