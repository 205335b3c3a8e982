// The compute engine probes `navigator` at load to pick terminal colours; an isolate has none.
const scope = globalThis as { navigator?: unknown };
if (scope.navigator === undefined) scope.navigator = {};
