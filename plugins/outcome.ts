import type { Failure, FailureKind, Outcome } from "./runtime.ts";

export function ok<T>(value: T): Outcome<T> {
  return { kind: "ok", value };
}

export function failed<T = never>(kind: FailureKind, message: string): Outcome<T> {
  return { kind: "failed", failure: { kind, message } };
}

export function failedWith<T = never>(failure: Failure): Outcome<T> {
  return { kind: "failed", failure };
}
