// The layering the folder READMEs state (hub/, sdk/, server/, plugins/), checked by test/layering.test.ts
// (`npm test`; by hand: npx depcruise hub sdk server plugins environments errors --config .dependency-cruiser.cjs).
// Imports flow one way: `hub` wires everything; `sdk` and `plugins` know nothing of `server`; `server`
// knows nothing of sandboxes, the hub or the SDK; `errors` (the error root every folder may import)
// imports none of them.
//
// Type-only imports (`import type`) count: they are erased at run time but still couple the folders, so a
// rule allows one only where a README names it. Two are allowed, each by its README:
//   - server/ -> sdk/failure-kinds.ts (`FailureKind`): the one vocabulary of failure kinds, so the kinds the
//     server reports itself are spelled as everywhere else (server/README.md);
//   - sdk/ -> plugins/index.ts (`EnvironmentRuntime`): the handle a swarm client runs episodes on
//     (sdk/README.md).
// Cycles count type-only edges too: a type that two files need lives in a third.
//
// Public entries: a top-level folder is imported from another only through the files listed here (its
// `index.ts` and its sub-packages' `index.ts`, and a few narrower entries); package.json's `exports` names
// the ones for users. hub/ has none: no other folder imports it. Not judged: environments/ (plugins packed
// apart, each bundled with the SDK files it imports), test/ (tests may reach inside what they test) and
// bench/ (not cruised; it goes through the entries where one offers what it measures, bench/README.md).
const PUBLIC_ENTRIES = [
  "errors/index.ts",
  // sdk/README.md. failure-kinds.ts: a leaf every folder may import (sdk/index.ts would load the swarm client);
  // swarm/protocol.ts: the swarm protocol for the server side of the connection, without the client (ws).
  "sdk/index.ts",
  "sdk/failure-kinds.ts",
  "sdk/env/index.ts",
  "sdk/env/schemas.ts",
  "sdk/env/serve.ts",
  "sdk/swarm/index.ts",
  "sdk/swarm/protocol.ts",
  "sdk/rewards/index.ts",
  // plugins/README.md
  "plugins/index.ts",
  // server/README.md: index.ts embeds the server; the sub-folders' entries are narrower (config/ loads zod and
  // yaml only), and the embedded engine's is loaded apart (createEngine imports it on first use).
  "server/index.ts",
  "server/app/index.ts",
  "server/config/index.ts",
  "server/db/index.ts",
  "server/engines/index.ts",
  "server/engines/embedded/index.ts",
  "server/episodes/index.ts",
  "server/openai/index.ts",
  "server/tokenizers/index.ts",
  "server/tracker/index.ts",
  "server/training/index.ts",
];
const PUBLIC_ENTRY = `^(${PUBLIC_ENTRIES.map((e) => e.replaceAll(".", "\\.")).join("|")})$`;

/** A rule that fails the check for every import from a file matching `from` to one matching `to`. */
const forbid = (name, comment, from, to) => ({ name, comment, severity: "error", from, to });
/** A rule that lets files matching `from` import files under `toPath` for types only. */
const typesOnly = (name, comment, from, toPath) =>
  forbid(name, comment, { path: from }, { path: toPath, dependencyTypesNot: ["type-only"] });

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    forbid(
      "no-circular",
      "No import cycles, type-only edges included: move the shared type or code to a file both import.",
      {},
      { circular: true },
    ),
    forbid("sdk-not-server-or-hub", "sdk/ never imports server/ or hub/ (sdk/README.md).", { path: "^sdk/" }, { path: "^(server|hub)/" }),
    typesOnly(
      "sdk-plugins-types-only",
      "sdk/ imports plugins/ (its entry, plugins/index.ts) for the sandbox runtime's types only (sdk/README.md).",
      "^sdk/",
      "^plugins/",
    ),
    forbid(
      "plugins-not-server-or-hub",
      "plugins/ never imports server/ or hub/ (plugins/README.md).",
      { path: "^plugins/" },
      { path: "^(server|hub)/" },
    ),
    forbid(
      "plugins-sdk-env-only",
      "plugins/ may import sdk/env/ (plugins/README.md) and the failure vocabulary (sdk/README.md), nothing else of sdk/.",
      { path: "^plugins/" },
      { path: "^sdk/", pathNot: "^sdk/(env/|failure-kinds\\.ts$)" },
    ),
    forbid(
      "server-not-plugins-hub-sdk",
      "server/ never imports plugins/, hub/ or sdk/, except the type of the failure vocabulary (server/README.md).",
      { path: "^server/" },
      { path: "^(plugins|hub|sdk)/", pathNot: "^sdk/failure-kinds\\.ts$" },
    ),
    forbid(
      "public-entries-only",
      "Another top-level folder is imported only through its public entries (PUBLIC_ENTRIES above, the folder READMEs).",
      { path: "^(hub|sdk|server|plugins)/" },
      { path: "^(hub|sdk|server|plugins|errors)/", pathNot: ["^$1/", PUBLIC_ENTRY] },
    ),
    forbid(
      "errors-imports-nothing",
      "errors/ is the root every folder imports, so it imports none of them (errors/README.md).",
      { path: "^errors/" },
      { path: "^(hub|sdk|server|plugins|environments)/" },
    ),
    typesOnly(
      "server-failure-kinds-types-only",
      "server/ imports sdk/failure-kinds.ts for the `FailureKind` type only (server/README.md).",
      "^server/",
      "^sdk/failure-kinds\\.ts$",
    ),
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)node_modules/|^test/" },
    // Keep `import type` edges (tsPreCompilationDeps) so the rules above can see and judge them.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json"],
    },
  },
};
