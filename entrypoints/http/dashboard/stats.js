// The whole store: counts per namespace, project, group and tag, disk size (memory.stats), and
// the namespaces with a re-embed action (memory.reembed, called until nothing remains).

import { countTable, el, formatBytes, section } from "./dom.js";
import { call } from "./rpc.js";

const REEMBED_STEP = 100; // notes per memory.reembed call: one step of the progress bar

export async function showStats(main) {
  const stats = await call("memory.stats", {});
  main.replaceChildren(
    section(
      "Store",
      el(
        "dl",
        { class: "globals", id: "store-summary" },
        el("dt", {}, "Notes"),
        el("dd", { id: "stat-notes" }, String(stats.notes)),
        el("dt", {}, "Globals"),
        el("dd", {}, String(stats.globals)),
        el("dt", {}, "Current namespace"),
        el("dd", {}, stats.currentNamespace ?? "not known yet (the model has not answered)"),
        el("dt", {}, "Disk size"),
        el("dd", { id: "stat-disk" }, `${formatBytes(stats.diskBytes)} (${stats.diskBytes} bytes)`),
      ),
    ),
    el(
      "div",
      { class: "tables" },
      section("By namespace", countTable("notes by home namespace", stats.byNamespace, "namespace")),
      section("By project", countTable("notes by project", stats.byProject, "project")),
      section("By group", countTable("notes by group, all projects", stats.byGroup, "group")),
      section("By tag", countTable("notes by tag, all projects", stats.byTag, "tag")),
    ),
  );
}

export async function showNamespaces(main, { fail, refresh }) {
  const stats = await call("memory.stats", {});
  const names = [...new Set([...Object.keys(stats.byNamespace), ...Object.keys(stats.vectors)])].sort();
  const progress = el("progress", { id: "reembed-progress", max: 1, value: 0, hidden: true });
  const progressText = el("p", { id: "reembed-status", role: "status", "aria-live": "polite" });
  const buttons = [];

  async function reembed(fromNamespace) {
    buttons.forEach((button) => (button.disabled = true));
    progress.hidden = false;
    progress.value = 0;
    let done = 0;
    let total = null;
    try {
      for (;;) {
        const step = await call("memory.reembed", { fromNamespace, limit: REEMBED_STEP });
        done += step.reembedded;
        total ??= step.reembedded + step.remaining;
        progress.max = Math.max(total, 1);
        progress.value = done;
        progressText.textContent = `Re-embedded ${done} of ${total} into ${step.namespace}; ${step.remaining} remaining.`;
        if (step.remaining === 0 || step.reembedded === 0) break;
      }
    } catch (error) {
      if (error.code === undefined) return fail(error);
      progressText.textContent = `Re-embedding stopped: ${error.message}`;
      buttons.forEach((button) => (button.disabled = false));
      return;
    }
    progressText.textContent = `Done: ${done} ${done === 1 ? "note" : "notes"} re-embedded.`;
    await refresh(progressText.textContent);
  }

  const rows = names.map((name) => {
    const home = stats.byNamespace[name] ?? 0;
    const current = name === stats.currentNamespace;
    let action = null;
    if (!current && home > 0) {
      action = el("button", { type: "button", class: "reembed", "data-namespace": name, onclick: () => reembed(name) }, "Re-embed into current");
      buttons.push(action);
    }
    return el(
      "tr",
      { "data-namespace": name },
      el("td", {}, name, current ? el("span", { class: "badge" }, "current") : null),
      el("td", { class: "num" }, String(home)),
      el("td", { class: "num" }, String(stats.vectors[name] ?? 0)),
      el("td", {}, action),
    );
  });
  const older = Object.entries(stats.byNamespace).filter(([name]) => name !== stats.currentNamespace).reduce((sum, [, count]) => sum + count, 0);
  const all = el("button", { type: "button", id: "reembed-all", class: "primary", disabled: older === 0, onclick: () => reembed(null) }, "Re-embed every older note");
  buttons.push(all);
  main.replaceChildren(
    section(
      "Namespaces",
      el("p", { class: "meta" }, `A note's home is the namespace its vector was computed in. Search compares vectors of the current namespace only; re-embedding gives older notes a vector of the current one (old vectors stay until dropped with mcp-memory reembed --drop).`),
      el(
        "table",
        { id: "namespaces" },
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "namespace"), el("th", { scope: "col", class: "num" }, "notes at home"), el("th", { scope: "col", class: "num" }, "vectors"), el("th", { scope: "col" }, ""))),
        el("tbody", {}, rows.length ? rows : el("tr", {}, el("td", { colspan: 4, class: "muted" }, "No namespace yet."))),
      ),
      el("div", { class: "row actions" }, all, el("span", { class: "muted" }, `${older} ${older === 1 ? "note has" : "notes have"} an older home.`)),
      progress,
      progressText,
    ),
  );
}
