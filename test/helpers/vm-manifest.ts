/**
 * The manifest of a vm plugin written at test time: version 1.0.0, MIT, one agent `solver`, rewards in
 * [0, 1]; `fields` gives its name and entry and may override the rest.
 */
export function vmManifest(fields: { name: string; entry: string } & Record<string, unknown>): Record<string, unknown> {
  return {
    version: "1.0.0",
    description: "fixture",
    license: "MIT",
    kind: "vm",
    agents: [{ id: "solver", role: "solver" }],
    splits: { train: { generate: 1 } },
    reward: { min: 0, max: 1 },
    ...fields,
  };
}
