import { PyError, type Value } from "./interpreter.ts";

/** The synthetic apps' databases: what a task's `dbs/state.json` holds and what its tests inspect. */
export interface AppState {
  todo: { tasks: Array<{ task_id: number; title: string; list: string; done: boolean }> };
  music: {
    songs: Array<{ song_id: number; title: string; artist: string }>;
    playlists: Array<{ playlist_id: number; title: string; song_ids: number[] }>;
  };
}

export interface Supervisor {
  first_name: string;
  last_name: string;
  email: string;
  phone_number: string;
}

/** What an API may touch besides the app databases. */
export interface ApiContext {
  state: AppState;
  supervisor: Supervisor;
  completeTask(answer: Value): void;
}

interface Param {
  name: string;
  type: "string" | "integer" | "boolean" | "any";
  required: boolean;
  default?: Value;
  description: string;
}

interface Api {
  description: string;
  method: "GET" | "POST" | "PUT" | "DELETE";
  params: Param[];
  run(ctx: ApiContext, args: Record<string, Value>): Value;
}

function fail(status: number, message: string): never {
  throw new PyError("Exception", `Response status code is ${status}:\n${JSON.stringify({ message })}`);
}

function nextId(ids: number[]): number {
  return ids.reduce((a, b) => Math.max(a, b), 0) + 1;
}

/** A parameter a call must give. */
function required(name: string, type: Param["type"], description: string): Param {
  return { name, type, required: true, description };
}

/** A parameter a call may leave out: it is then `defaultValue`. */
function optional(name: string, type: Param["type"], defaultValue: Value, description: string): Param {
  return { name, type, required: false, default: defaultValue, description };
}

const DESCRIPTIONS: Record<string, string> = {
  api_docs: "An app to search and explore API documentation.",
  supervisor: "An app to access supervisor's personal information, and mark the task complete.",
  todo: "A to-do list app to add, complete and delete tasks in named lists.",
  music: "A music app to search songs and manage playlists.",
};

const APIS: Record<string, Record<string, Api>> = {
  api_docs: {
    show_app_descriptions: { description: "Show the names and descriptions of all apps.", method: "GET", params: [], run: () => appDescriptions() },
    show_api_descriptions: {
      description: "Show the names and descriptions of the APIs of an app.",
      method: "GET",
      params: [required("app_name", "string", "The app's name.")],
      run: (_ctx, a) => {
        const app = APIS[a["app_name"] as string];
        if (!app) fail(422, `No app named ${String(a["app_name"])}.`);
        return Object.entries(app).map(([name, api]) => ({ name, description: api.description }));
      },
    },
    show_api_doc: {
      description: "Show the full documentation of one API.",
      method: "GET",
      params: [required("app_name", "string", "The app's name."), required("api_name", "string", "The API's name.")],
      run: (_ctx, a) => apiDoc(a["app_name"] as string, a["api_name"] as string),
    },
  },
  supervisor: {
    show_profile: { description: "Show your supervisor's profile.", method: "GET", params: [], run: (ctx) => ({ ...ctx.supervisor }) },
    complete_task: {
      description: "Mark the currently active task as complete, with an answer when the task asks a question.",
      method: "POST",
      params: [
        optional("status", "string", "success", "success or fail."),
        optional("answer", "any", null, "The answer, if the task asks for one."),
      ],
      run: (ctx, a) => {
        ctx.completeTask(a["answer"] ?? null);
        return { message: "Marked the active task complete." };
      },
    },
  },
  todo: {
    show_tasks: {
      description: "Show tasks, optionally only those of one list or with a done status.",
      method: "GET",
      params: [
        optional("list", "string", null, "Only tasks of this list."),
        optional("done", "boolean", null, "Only done (true) or open (false) tasks."),
      ],
      run: (ctx, a) =>
        ctx.state.todo.tasks.filter((t) => (a["list"] == null || t.list === a["list"]) && (a["done"] == null || t.done === a["done"])).map((t) => ({ ...t })),
    },
    add_task: {
      description: "Add a task to a list.",
      method: "POST",
      params: [required("title", "string", "The task's title."), optional("list", "string", "inbox", "The list to add it to.")],
      run: (ctx, a) => {
        const task_id = nextId(ctx.state.todo.tasks.map((t) => t.task_id));
        ctx.state.todo.tasks.push({ task_id, title: a["title"] as string, list: a["list"] as string, done: false });
        return { message: "Task added.", task_id };
      },
    },
    mark_done: {
      description: "Mark a task as done.",
      method: "PUT",
      params: [required("task_id", "integer", "The task's id.")],
      run: (ctx, a) => {
        const task = ctx.state.todo.tasks.find((t) => t.task_id === a["task_id"]);
        if (!task) fail(404, "The task does not exist.");
        task.done = true;
        return { message: "Task marked done." };
      },
    },
    delete_task: {
      description: "Delete a task.",
      method: "DELETE",
      params: [required("task_id", "integer", "The task's id.")],
      run: (ctx, a) => {
        const before = ctx.state.todo.tasks.length;
        ctx.state.todo.tasks = ctx.state.todo.tasks.filter((t) => t.task_id !== a["task_id"]);
        if (ctx.state.todo.tasks.length === before) fail(404, "The task does not exist.");
        return { message: "Task deleted." };
      },
    },
  },
  music: {
    search_songs: {
      description: "Search songs by title words and/or artist.",
      method: "GET",
      params: [optional("query", "string", "", "Words in the title."), optional("artist", "string", null, "Only songs by this artist.")],
      run: (ctx, a) => {
        const q = String(a["query"] ?? "").toLowerCase();
        return ctx.state.music.songs.filter((s) => s.title.toLowerCase().includes(q) && (a["artist"] == null || s.artist === a["artist"])).map((s) => ({ ...s }));
      },
    },
    show_playlists: {
      description: "Show your playlists.",
      method: "GET",
      params: [],
      run: (ctx) => ctx.state.music.playlists.map((p) => ({ playlist_id: p.playlist_id, title: p.title, num_songs: p.song_ids.length })),
    },
    create_playlist: {
      description: "Create an empty playlist.",
      method: "POST",
      params: [required("title", "string", "The playlist's title.")],
      run: (ctx, a) => {
        const playlist_id = nextId(ctx.state.music.playlists.map((p) => p.playlist_id));
        ctx.state.music.playlists.push({ playlist_id, title: a["title"] as string, song_ids: [] });
        return { message: "Playlist created.", playlist_id };
      },
    },
    add_song_to_playlist: {
      description: "Add a song to a playlist.",
      method: "POST",
      params: [required("playlist_id", "integer", "The playlist's id."), required("song_id", "integer", "The song's id.")],
      run: (ctx, a) => {
        const playlist = ctx.state.music.playlists.find((p) => p.playlist_id === a["playlist_id"]);
        if (!playlist) fail(404, "The playlist does not exist.");
        if (!ctx.state.music.songs.some((s) => s.song_id === a["song_id"])) fail(404, "The song does not exist.");
        if (playlist.song_ids.includes(a["song_id"] as number)) fail(409, "The song is already in this playlist.");
        playlist.song_ids.push(a["song_id"] as number);
        return { message: "Song added to the playlist." };
      },
    },
  },
};

export function appDescriptions(): Value {
  return Object.keys(APIS).map((name) => ({ name, description: DESCRIPTIONS[name] ?? "" }));
}

function apiDoc(appName: string, apiName: string): Value {
  const api = APIS[appName]?.[apiName];
  if (!api) fail(422, `No API named ${apiName} in app ${appName}.`);
  return {
    app_name: appName,
    api_name: apiName,
    path: `/${appName}/${apiName}`,
    method: api.method,
    description: api.description,
    parameters: api.params.map((p) => ({ name: p.name, type: p.type, required: p.required, description: p.description, default: p.default ?? null })),
  };
}

/** Every app's API docs, as `GET /api_docs` answers them (app -> api -> doc). */
export function allApiDocs(): Record<string, Record<string, Value>> {
  return Object.fromEntries(Object.entries(APIS).map(([app, apis]) => [app, Object.fromEntries(Object.keys(apis).map((name) => [name, apiDoc(app, name)]))]));
}

function checkType(p: Param, v: Value): boolean {
  if (v === null && !p.required) return true;
  if (p.type === "any") return true;
  if (p.type === "string") return typeof v === "string";
  if (p.type === "integer") return typeof v === "number" && Number.isInteger(v);
  return typeof v === "boolean";
}

/** The `apis` object of a world: `apis.<app>.<api>(...)` calls the app against `ctx`. */
export function createApis(ctx: ApiContext): Value {
  const members: Record<string, Value> = {};
  for (const [app, apis] of Object.entries(APIS)) {
    const fns: Record<string, Value> = {};
    for (const [name, api] of Object.entries(apis)) {
      fns[name] = {
        kind: "callable",
        name: `${app}.${name}`,
        call: (args, kwargs) => {
          const bound: Record<string, Value> = {};
          if (args.length > api.params.length) fail(422, `${name} takes ${api.params.length} arguments but ${args.length} were given.`);
          api.params.forEach((p, i) => {
            if (i < args.length) bound[p.name] = args[i]!;
          });
          for (const [k, v] of Object.entries(kwargs)) {
            if (!api.params.some((p) => p.name === k)) fail(422, `Unexpected parameter: ${k}.`);
            bound[k] = v;
          }
          for (const p of api.params) {
            if (!(p.name in bound)) {
              if (p.required) fail(422, `Missing required parameter: ${p.name}.`);
              bound[p.name] = p.default ?? null;
            }
            if (!checkType(p, bound[p.name]!)) fail(422, `Parameter ${p.name} must be of type ${p.type}.`);
          }
          return api.run(ctx, bound);
        },
      };
    }
    members[app] = { kind: "namespace", name: app, members: fns };
  }
  return { kind: "namespace", name: "apis", members };
}
