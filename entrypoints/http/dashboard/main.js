// The dashboard: routes (#/, #/project/<id>, #/stats, #/namespaces), the token gate, the list of
// projects. Every piece of data comes from POST /rpc; nothing is shown before a call succeeds.

import { byId, el, countTable, section } from "./dom.js";
import { NoteView } from "./notes.js";
import { ProjectView } from "./project.js";
import { AuthRequired, call, forgetToken, setToken, token } from "./rpc.js";
import { showNamespaces, showStats } from "./stats.js";

const main = byId("main");
let firstRender = true;

function status(message) {
  byId("status").textContent = message;
}

// The first screen with data: marked for the Performance API (read by the browser tests).
function ready() {
  if (firstRender) {
    firstRender = false;
    performance.mark("mcp-memory:ready");
  }
}

function hideData() {
  byId("app").hidden = true;
  main.replaceChildren();
  byId("project-list").replaceChildren();
  byId("current-namespace").textContent = "";
  notes.close();
}

function askForToken(reason) {
  hideData();
  const form = byId("token-form");
  form.hidden = false;
  byId("forget-token").hidden = true;
  byId("token-error").textContent = reason === "token_invalid" && token() ? "The server refused this token." : "";
  if (reason === "token_invalid") forgetToken();
  byId("token-input").value = "";
  byId("token-input").focus();
  status("");
}

function fail(error) {
  if (error instanceof AuthRequired) return askForToken(error.reason);
  status(`Error: ${error.message}`);
}

const notes = new NoteView({
  onChange: () => refresh("Saved."),
  onError: fail,
});
const project = new ProjectView({ main, notes, fail });

function routeOf() {
  const hash = location.hash.replace(/^#\/?/, "");
  if (hash.startsWith("project/")) return { view: "project", projectId: decodeURIComponent(hash.slice("project/".length)) };
  if (hash === "stats" || hash === "namespaces") return { view: hash };
  return { view: "projects" };
}

export function projectHref(projectId) {
  return `#/project/${encodeURIComponent(projectId)}`;
}

function renderProjectList(byProject, current) {
  const entries = Object.entries(byProject).sort((a, b) => a[0].localeCompare(b[0]));
  byId("project-list").replaceChildren(
    ...(entries.length === 0
      ? [el("li", { class: "muted" }, "No notes yet.")]
      : entries.map(([id, count]) =>
          el("li", {}, el("a", { href: projectHref(id), "aria-current": id === current ? "page" : false, "data-project": id }, el("span", {}, id), el("span", { class: "count" }, String(count)))),
        )),
  );
}

function showProjects(stats) {
  const entries = Object.entries(stats.byProject).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  main.replaceChildren(
    section(
      "Projects",
      entries.length === 0
        ? el("p", { class: "muted" }, "No notes yet. Agents add them with memory.add_note.")
        : el(
            "table",
            { id: "projects" },
            el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "project"), el("th", { scope: "col", class: "num" }, "notes"))),
            el("tbody", {}, entries.map(([id, count]) => el("tr", {}, el("td", {}, el("a", { href: projectHref(id) }, id)), el("td", { class: "num" }, String(count))))),
          ),
    ),
    section("By namespace", countTable("notes by home namespace", stats.byNamespace, "namespace")),
  );
}

function markNav(view) {
  for (const [id, name] of [["nav-projects", "projects"], ["nav-stats", "stats"], ["nav-namespaces", "namespaces"]]) {
    const link = byId(id);
    if (name === view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

async function render() {
  const route = routeOf();
  const [overview] = await Promise.all([
    call("memory.stats", {}),
    route.view === "project" ? project.show(route.projectId) : null, // at the same time
  ]);
  showApp(route, overview);
  if (route.view === "stats") await showStats(main);
  else if (route.view === "namespaces") await showNamespaces(main, { fail, refresh });
  else if (route.view === "projects") showProjects(overview);
  ready();
}

function showApp(route, overview) {
  byId("token-form").hidden = true;
  byId("app").hidden = false;
  byId("forget-token").hidden = !token();
  byId("current-namespace").textContent = overview.currentNamespace ? `namespace ${overview.currentNamespace}` : "";
  renderProjectList(overview.byProject, route.view === "project" ? route.projectId : null);
  markNav(route.view === "project" ? "projects" : route.view);
}

async function refresh(message = "") {
  try {
    await render();
    status(message);
  } catch (error) {
    fail(error);
  }
}

byId("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const value = byId("token-input").value.trim();
  if (!value) return;
  setToken(value);
  byId("token-input").value = "";
  refresh();
});

byId("forget-token").addEventListener("click", () => {
  forgetToken();
  askForToken("token_missing");
});

window.addEventListener("hashchange", () => {
  status("");
  refresh().then(() => main.focus({ preventScroll: true }));
});

refresh();
