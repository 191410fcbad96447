// One project: its groups and tags (memory.stats), its recent notes (memory.list_recent, paged
// here), a search box (memory.search), and its globals (memory.get_global).

import { clear, el, formatTime, section } from "./dom.js";
import { queryTerms } from "./highlight.js";
import { noteItem } from "./notes.js";
import { AuthRequired, batch, call } from "./rpc.js";

export const PAGE_SIZE = 20;
export const RECENT_LIMIT = 200; // memory.list_recent's largest limit
const MAX_CHIPS = 60;
const MODES = [
  ["hybrid", "hybrid (keyword + meaning)"],
  ["semantic", "semantic (meaning)"],
  ["keyword", "keyword (BM25)"],
];
const TOP_K = [5, 10, 20, 50];
export const STANDARD_KEYS = [
  "global.memory.embedder.provider",
  "global.memory.embedder.model",
  "global.memory.groupDefaults",
  "global.project.conventions",
];

function ranked(counts) {
  return Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

function globalValue(result) {
  if (result instanceof Error) return el("p", { class: "error" }, result.message);
  if (!result.found) return el("p", { class: "muted" }, "not set");
  const value = typeof result.value === "string" ? result.value : JSON.stringify(result.value, null, 2);
  return [el("pre", { class: "global-value" }, value), el("p", { class: "meta" }, `updated ${formatTime(result.updatedAt)}`)];
}

export class ProjectView {
  constructor({ main, notes, fail }) {
    this.main = main;
    this.notes = notes;
    this.fail = fail;
    this.projectId = null;
  }

  async show(projectId) {
    if (projectId !== this.projectId) {
      this.projectId = projectId;
      this.group = null;
      this.tags = [];
      this.page = 0;
      this.query = "";
      this.mode = "hybrid";
      this.topK = 10;
      this.superseded = false;
    }
    await this.load();
  }

  async load() {
    const projectId = this.projectId;
    const [stats, recent, ...globals] = await batch([
      ["memory.stats", { projectId }],
      ["memory.list_recent", { projectId, groupId: this.group, tags: this.tags, limit: RECENT_LIMIT, includeSuperseded: this.superseded }],
      ...STANDARD_KEYS.map((key) => ["memory.get_global", { projectId, key }]),
    ]);
    for (const result of [stats, recent]) if (result instanceof Error) throw result;
    if (projectId !== this.projectId) return;
    this.stats = stats;
    this.recent = recent.items;
    this.globals = globals;
    this.page = Math.min(this.page, Math.max(0, Math.ceil(this.recent.length / PAGE_SIZE) - 1));
    this.render();
    if (this.query) await this.search();
  }

  render() {
    this.results = el("div", { id: "search-results", "aria-live": "polite" });
    this.recentList = el("div", { id: "recent" });
    const showSuperseded = el("input", { type: "checkbox", id: "show-superseded", checked: this.superseded });
    showSuperseded.addEventListener("change", () => {
      this.superseded = showSuperseded.checked;
      this.page = 0;
      this.load().catch(this.fail);
    });
    const toggle = el("p", { class: "row" }, showSuperseded, el("label", { for: "show-superseded" }, "Show superseded notes"));
    this.main.replaceChildren(this.header(), this.searchPanel(), section("Recent notes", toggle, this.recentList), this.globalsPanel());
    this.renderRecent();
  }

  header() {
    const groups = ranked(this.stats.byGroup);
    const tags = ranked(this.stats.byTag);
    const groupChip = (group, label) =>
      el("button", { type: "button", class: "chip group-chip", "aria-pressed": String(this.group === group), "data-group": group ?? "", onclick: () => this.setGroup(group) }, label);
    const tagChip = ([tag, count]) =>
      el("button", { type: "button", class: "chip tag-chip", "aria-pressed": String(this.tags.includes(tag)), "data-tag": tag, onclick: () => this.toggleTag(tag) }, `${tag} (${count})`);
    return el(
      "section",
      { class: "panel", id: "project-head" },
      el("h2", { id: "project-title" }, this.projectId),
      el("p", { class: "muted" }, `${this.stats.notes} notes · ${this.stats.globals} globals`),
      el("h3", {}, "Groups"),
      el("div", { class: "chips", id: "groups", role: "group", "aria-label": "Filter by group" }, groupChip(null, "all groups"), groups.slice(0, MAX_CHIPS).map(([group, count]) => groupChip(group, `${group} (${count})`))),
      tags.length ? el("h3", {}, "Tags") : null,
      tags.length ? el("div", { class: "chips", id: "tags", role: "group", "aria-label": "Filter by tags (all must match)" }, tags.slice(0, MAX_CHIPS).map(tagChip)) : null,
    );
  }

  searchPanel() {
    this.input = el("input", { type: "search", id: "search-input", name: "query", value: this.query, placeholder: "What do you want to find?", autocomplete: "off" });
    this.modeSelect = el("select", { id: "search-mode", name: "mode" }, MODES.map(([value, label]) => el("option", { value }, label)));
    this.modeSelect.value = this.mode;
    this.topKSelect = el("select", { id: "search-topk", name: "topK" }, TOP_K.map((k) => el("option", { value: k }, String(k))));
    this.topKSelect.value = String(this.topK);
    const form = el(
      "form",
      { role: "search", class: "search", id: "search-form" },
      el("div", { class: "grow" }, el("label", { for: "search-input" }, "Search this project"), this.input),
      el("div", {}, el("label", { for: "search-mode" }, "Mode"), this.modeSelect),
      el("div", {}, el("label", { for: "search-topk" }, "Results"), this.topKSelect),
      el("button", { type: "submit", class: "primary", id: "search-submit" }, "Search"),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.query = this.input.value.trim();
      this.mode = this.modeSelect.value;
      this.topK = Number(this.topKSelect.value);
      this.search().catch(this.fail);
    });
    return el("section", { class: "panel" }, form, this.results);
  }

  async search() {
    if (!this.query) {
      clear(this.results);
      return;
    }
    const started = performance.now();
    const params = { projectId: this.projectId, query: this.query, mode: this.mode, topK: this.topK, groupId: this.group, tags: this.tags.length ? this.tags : null };
    let found;
    try {
      found = await call("memory.search", params);
    } catch (error) {
      if (error instanceof AuthRequired) throw error;
      this.results.replaceChildren(el("p", { class: "error" }, error.message));
      return;
    }
    const terms = queryTerms(this.query);
    const summary = `${found.results.length} ${found.results.length === 1 ? "result" : "results"} (${this.mode}, ${found.namespace})`;
    this.results.replaceChildren(
      el("h3", { id: "search-summary" }, summary),
      found.results.length === 0
        ? el("p", { class: "muted" }, "No note matches.")
        : el("ol", { class: "notes", id: "search-list" }, found.results.map((hit) => noteItem(hit, { terms, score: hit.score, onOpen: (id, opener) => this.notes.open(id, opener) }))),
    );
    performance.measure("mcp-memory:search", { start: started, end: performance.now() });
  }

  renderRecent() {
    const total = this.recent.length;
    const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
    const first = this.page * PAGE_SIZE;
    const shown = this.recent.slice(first, first + PAGE_SIZE);
    const position = total === 0 ? "No notes" : `Notes ${first + 1}–${first + shown.length} of ${total}${total === RECENT_LIMIT ? " newest" : ""}`;
    this.recentList.replaceChildren(
      shown.length === 0
        ? el("p", { class: "muted" }, "Nothing here yet.")
        : el("ul", { class: "notes", id: "recent-list" }, shown.map((note) => noteItem(note, { onOpen: (id, opener) => this.notes.open(id, opener) }))),
      el(
        "div",
        { class: "pager" },
        el("button", { type: "button", id: "page-newer", disabled: this.page === 0, onclick: () => this.turn(-1) }, "← Newer"),
        el("span", { id: "page-position", "aria-live": "polite" }, `${position} · page ${this.page + 1} of ${pages}`),
        el("button", { type: "button", id: "page-older", disabled: this.page >= pages - 1, onclick: () => this.turn(1) }, "Older →"),
      ),
      total === RECENT_LIMIT ? el("p", { class: "meta" }, `The newest ${RECENT_LIMIT} are listed; filter by group or tag, or search, to reach older notes.`) : null,
    );
  }

  turn(step) {
    this.page += step;
    this.renderRecent();
    document.getElementById(step > 0 ? "page-older" : "page-newer")?.focus();
  }

  setGroup(group) {
    this.group = group;
    this.page = 0;
    this.load().catch(this.fail);
  }

  toggleTag(tag) {
    this.tags = this.tags.includes(tag) ? this.tags.filter((t) => t !== tag) : [...this.tags, tag];
    this.page = 0;
    this.load().catch(this.fail);
  }

  globalsPanel() {
    const lookedUp = el("div", { id: "global-lookup-result" });
    const keyInput = el("input", { id: "global-key", placeholder: "global.my.key", autocomplete: "off", spellcheck: "false" });
    const form = el(
      "form",
      { class: "row", id: "global-lookup" },
      el("label", { for: "global-key", class: "muted" }, "Another key"),
      keyInput,
      el("button", { type: "submit" }, "Look up"),
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const key = keyInput.value.trim();
      if (!key) return;
      let result;
      try {
        result = await call("memory.get_global", { projectId: this.projectId, key });
      } catch (error) {
        if (error instanceof AuthRequired) return this.fail(error);
        result = error;
      }
      lookedUp.replaceChildren(el("dl", { class: "globals" }, el("dt", {}, key), el("dd", {}, globalValue(result))));
    });
    return section(
      "Globals",
      el("p", { class: "meta" }, "The standard keys, and any other key you look up (there is no method listing a project's keys)."),
      el("dl", { class: "globals", id: "globals" }, STANDARD_KEYS.map((key, index) => [el("dt", {}, key), el("dd", {}, globalValue(this.globals[index]))])),
      form,
      lookedUp,
    );
  }
}
