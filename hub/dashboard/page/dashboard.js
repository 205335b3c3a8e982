// The agentjet dashboard: plain DOM, no build step. The printed link's fragment carries a one-time
// code (#code=...), traded once for the admin token; or the user pastes the token. It lives in this
// tab's sessionStorage and goes out as a Bearer header.
const KEY = "agentjet-admin-token";
const $ = (id) => document.getElementById(id);

async function takeToken() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const code = fragment.get("code");
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
  if (code) {
    const res = await fetch("/v1/dashboard/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code }) });
    if (res.ok) sessionStorage.setItem(KEY, (await res.json()).token);
  }
  return sessionStorage.getItem(KEY);
}

let token = null;

/** A GET's body and its headers. */
async function request(path) {
  const res = await fetch(path, { headers: { authorization: `Bearer ${token}` }, cache: "no-store" });
  if (res.status === 401 || res.status === 403) {
    sessionStorage.removeItem(KEY);
    showLogin();
    throw new Error(`not allowed (${res.status})`);
  }
  const body = await res.json();
  if (!res.ok) throw new Error(body?.error?.message ?? `HTTP ${res.status}`);
  return { body, headers: res.headers };
}

const api = async (path) => (await request(path)).body;

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("data-") || k === "title") e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) e.append(c);
  return e;
}

const fmtTime = (ms) => (ms ? new Date(ms).toLocaleTimeString() : "-");
const fmtNum = (x, d = 3) => (x === null || x === undefined ? "-" : Number(x).toFixed(d));
const ago = (ms) => `${Math.max(0, Math.round((Date.now() - ms) / 1000))} s ago`;

function showLogin() {
  $("login").hidden = false;
  $("main").hidden = true;
}

$("login").addEventListener("submit", (ev) => {
  ev.preventDefault();
  token = $("token").value.trim();
  sessionStorage.setItem(KEY, token);
  start();
});

// ---- live stream (server-sent events read through fetch, so the header can be sent) ----
let chartVersion = -1;
let failuresAt = 0;

async function stream() {
  for (;;) {
    try {
      const res = await fetch("/v1/dashboard/stream", { headers: { authorization: `Bearer ${token}` }, cache: "no-store" });
      if (res.status === 401 || res.status === 403) return showLogin();
      $("conn").textContent = "live";
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let at;
        while ((at = buf.indexOf("\n\n")) !== -1) {
          const frame = buf.slice(0, at);
          buf = buf.slice(at + 2);
          const data = frame.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
          if (data) renderLive(JSON.parse(data));
        }
      }
    } catch {
      // the server went away; retry below
    }
    $("conn").textContent = "reconnecting";
    await new Promise((r) => setTimeout(r, 2000));
  }
}

function renderLive(s) {
  const st = s.status;
  $("state").textContent = st.state;
  $("state").className = `badge ${st.state}`;
  $("step").textContent = String(st.step);
  $("steps").textContent = s.steps ? ` / ${s.steps}` : "";
  $("versions").textContent = Object.entries(st.versions).map(([p, v]) => `${p} v${v}`).join(", ");
  $("rate").textContent = s.fill ? `${fmtNum(s.fill.episodesPerS, 2)} episodes/s` : "";
  $("eta").textContent = s.fill && s.fill.etaS !== null ? `ETA ${Math.round(s.fill.etaS)} s` : "";

  const fill = $("fill");
  fill.replaceChildren();
  if (s.fill) {
    fill.append(el("div", { class: "muted", text: `collecting step ${s.fill.step} (${s.fill.phase})` }));
    for (const [env, f] of Object.entries(s.fill.perEnv)) {
      const bar = el("span", { class: "bar" }, el("i"));
      bar.firstChild.style.width = `${Math.min(100, (100 * f.done) / Math.max(1, f.target))}%`;
      fill.append(el("div", {}, el("b", { text: env }), bar, `${f.done} / ${f.target} episodes`, f.meanReward !== undefined ? `, reward ${fmtNum(f.meanReward)}, success ${fmtNum(f.success, 2)}` : ""));
    }
  }
  $("queue").textContent = s.queue ? `queued ${s.queue.queued}, in flight ${s.queue.inFlight}, registered ${s.queue.registered}, claimed ${s.queue.claimed}` : `engine ${st.state}${st.lastRun ? `; last run ${st.lastRun.reason} at step ${st.lastRun.step}` : ""}`;
  $("sandboxes").textContent = s.sandboxes.length ? `sandboxes: ${s.sandboxes.map((b) => `${b.env} ${b.live} live / ${b.idle} idle (${b.started} started, ${b.replaced} replaced)`).join("; ")}` : "";
  $("logs").replaceChildren(...s.logs.map((l) => el("li", { class: l.level, text: `${l.time} ${l.level}: ${l.message}` })));

  $("clients").tBodies[0].replaceChildren(
    ...s.clients.map((c) =>
      el("tr", { "data-client-id": c.clientId },
        el("td", { text: c.clientId }),
        el("td", { text: c.connected ? "connected" : "gone" }),
        el("td", { text: c.envs.map((e) => `${e.name}@${e.version} ${e.hash.slice(0, 12)}${e.dev ? " (dev)" : ""}`).join(", ") }),
        el("td", { text: String(c.concurrency) }),
        el("td", { text: String(c.inFlight) }),
        el("td", { text: ago(c.lastSeen) }),
        el("td", { text: String(c.ended) }),
        el("td", { text: String(c.failed) }),
      ),
    ),
  );
  if (s.chartVersion !== chartVersion) {
    chartVersion = s.chartVersion;
    loadCharts().catch(() => undefined);
  }
  followEpisodes(s.episodesVersion);
  if (Date.now() - failuresAt > 5000) {
    failuresAt = Date.now();
    loadFailures().catch(() => undefined);
  }
}

async function loadCharts() {
  const { charts } = await api("/v1/dashboard/charts");
  $("charts").replaceChildren(
    ...charts.map((c) => el("img", { alt: c.title, title: c.title, "data-chart": c.slug, src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(c.svg)}` })),
  );
}

async function loadFailures() {
  const { failures } = await api("/v1/dashboard/failures");
  $("failures").tBodies[0].replaceChildren(
    ...failures.map((f) =>
      el("tr", {},
        el("td", { text: fmtTime(f.endedAt ?? f.createdAt) }),
        el("td", { text: f.env }),
        el("td", { text: f.taskId }),
        el("td", { text: f.failure?.kind ?? "" }),
        el("td", { text: f.failure?.message ?? "" }),
        el("td", {}, f.stderrTail ? el("pre", { class: "stderr", text: f.stderrTail }) : ""),
      ),
    ),
  );
}

// ---- episode browser ----
// The first page follows the run: it is fetched again when the stream's episodesVersion moves, at most
// every FOLLOW_MS and, when the server's last two queries were slow (its Server-Timing; a filtered first
// page counts its matches, a scan that holds the server's event loop), no more than 1/FOLLOW_SHARE of
// the time. Once older pages are shown the list holds still until the next search.
const FOLLOW_MS = 2000;
const FOLLOW_SHARE = 50;
let cursor = null;
/** The filter last searched for (not what the form holds while being edited). */
let filter = new URLSearchParams();
let paged = false;
/** Only the latest request's answer is shown: an older one may come back after it. */
let listSeq = 0;
let listVersion = null;
let listAt = 0;
/** How long the server's last two list queries took, ms. */
let listCosts = [0, 0];
let following = false;

function readFilter() {
  const q = new URLSearchParams();
  for (const [k, v] of new FormData($("filter"))) if (String(v).trim() !== "") q.set(k, String(v).trim());
  return q;
}

function followEpisodes(version) {
  if (paged || following || version === listVersion || Date.now() - listAt < Math.max(FOLLOW_MS, FOLLOW_SHARE * Math.min(...listCosts))) return;
  following = true;
  listVersion = version;
  loadEpisodes()
    .catch(() => undefined)
    .finally(() => (following = false));
}

async function loadEpisodes(more = false) {
  const seq = ++listSeq;
  const q = new URLSearchParams(filter);
  if (more && cursor) q.set("cursor", cursor);
  const { body: page, headers } = await request(`/v1/dashboard/episodes?${q}`).finally(() => (listAt = Date.now()));
  listCosts = [listCosts[1], Number(/dur=([\d.]+)/.exec(headers.get("server-timing") ?? "")?.[1] ?? 0)];
  if (seq !== listSeq) return;
  paged = more;
  $("follow").textContent = paged ? "older pages shown: the list holds still (Search follows the newest again)" : "";
  const body = $("episodes").tBodies[0];
  if (!more) body.replaceChildren();
  for (const e of page.episodes) {
    const row = el("tr", { class: "ep", "data-episode-id": e.episodeId },
      el("td", { text: fmtTime(e.createdAt) }),
      el("td", { text: e.episodeId }),
      el("td", { text: e.env }),
      el("td", { text: e.taskId }),
      el("td", { text: e.state }),
      el("td", { text: fmtNum(e.reward) }),
      el("td", { text: String(e.calls) }),
      el("td", { text: e.failure ? `${e.failure.kind}: ${e.failure.message}` : "" }),
    );
    row.addEventListener("click", () => openEpisode(e.episodeId).catch((err) => alert(err.message)));
    body.append(row);
  }
  if (page.total !== null) $("total").textContent = `${page.total} episodes`;
  cursor = page.next;
  $("more").hidden = cursor === null;
}

$("filter").addEventListener("submit", (ev) => {
  ev.preventDefault();
  filter = readFilter();
  loadEpisodes().catch((err) => alert(err.message));
});
$("more").addEventListener("click", () => loadEpisodes(true).catch((err) => alert(err.message)));
$("close").addEventListener("click", () => ($("episode").hidden = true));

/** What each reward model and judge paid (run.db's episodes.metadata.rewardParts), beside the environment's own reward, with each judge's raw verdict. */
function rewardPartsView(metadata) {
  const parts = metadata && typeof metadata === "object" ? metadata.rewardParts : undefined;
  if (!parts || typeof parts !== "object") return "";
  const box = el("div", { class: "reward-parts" });
  for (const [agent, p] of Object.entries(parts)) {
    const values = Object.entries(p?.values ?? {}).map(([name, v]) => `${name} ${fmtNum(v)}`).join(", ");
    box.append(el("p", { "data-agent": agent, text: `reward parts of ${agent}: ${values}` }));
    for (const [name, raw] of Object.entries(p?.verdicts ?? {})) {
      box.append(el("details", { "data-verdict": name }, el("summary", { text: `${agent}: ${name}'s verdict` }), el("pre", { class: "verdict", text: String(raw) })));
    }
  }
  return box;
}

async function openEpisode(id) {
  const d = await api(`/v1/dashboard/episodes/${encodeURIComponent(id)}`);
  const e = d.episode;
  const out = $("episode-body");
  out.replaceChildren(
    el("h2", { text: `episode ${e.episodeId}` }),
    el("p", { text: `${e.env} / task ${e.taskId} - ${e.state}${e.eval ? " (evaluation)" : ""}, attempt ${e.attempt}, reward ${fmtNum(e.reward)} ${e.rewards ? JSON.stringify(e.rewards) : ""}` }),
    e.failure ? el("p", { text: `failure ${e.failure.kind}: ${e.failure.message}` }) : "",
    rewardPartsView(e.metadata),
    el("p", { class: "legend" }, el("span", { class: "tok trained", text: "trained (loss mask 1)" }), " ", el("span", { class: "tok", text: "not trained" }), " - hover a generated token for its log-prob"),
    el("p", { text: d.samples.length ? `merged into ${d.samples.length} sample(s): ${d.samples.map((s) => `#${s.index} ${s.agentId} (${s.callIds.length} calls, ${s.tokens} tokens, ${s.trainedTokens} trained${s.trainedAtStep !== null ? `, trained at step ${s.trainedAtStep}` : ""})`).join("; ")}` : "no merged samples (not rewarded, evaluation, or no trainable calls)" }),
  );
  for (const c of d.calls) {
    const output = el("div", { class: "out" });
    for (const t of c.output) output.append(el("span", { class: t.trained ? "tok trained" : "tok", "data-id": String(t.id), title: `id ${t.id}  logprob ${t.logprob.toFixed(4)}  p=${Math.exp(t.logprob).toFixed(3)}`, text: t.text }));
    out.append(
      el("div", { class: "call", "data-call-id": c.callId },
        el("h3", { text: `${c.agentId} #${c.seq} - ${c.policy} v${c.version}${c.trainable ? "" : " (frozen)"} - ${c.finishReason}, ${Math.round(c.latencyMs)} ms - ${c.sample === null ? "in no sample" : `sample #${c.sample}`}` }),
        ...c.prompt.map((p) => el("div", { class: "seg" }, el("span", { class: "role", text: `${p.role} (${p.tokens} tokens) ` }), p.text)),
        el("div", { class: "seg" }, el("span", { class: "role", text: "header " }), c.header),
        output,
      ),
    );
  }
  $("episode").hidden = false;
}

function start() {
  $("login").hidden = true;
  $("main").hidden = false;
  stream();
  loadEpisodes().catch(() => undefined);
}

takeToken().then((t) => {
  token = t;
  if (token) start();
  else showLogin();
});
