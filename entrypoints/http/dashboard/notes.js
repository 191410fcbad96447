// A note in a list, and the note view: edit title, text, tags, group and importance
// (memory.update), mark the note as superseding another (memory.update's supersedes), see its
// supersession chain and a graph of its links, or delete after a confirmation (memory.delete).
// Escape closes the view.

import { byId, el, formatTime } from "./dom.js";
import { graphView, neighbourhood } from "./graph.js";
import { excerpt, highlighted } from "./highlight.js";
import { call } from "./rpc.js";

const NO_TERMS = new Set();

const HEADING_CHARS = 80;

// A note without a title is headed by its first line; the rest of the text follows.
function headingAndBody(note) {
  if (note.title) return [note.title, note.text];
  const [firstLine, ...rest] = note.text.trim().split("\n");
  if (firstLine.length > HEADING_CHARS) return [`${firstLine.slice(0, HEADING_CHARS)}…`, note.text];
  return [firstLine, rest.join("\n").trim()];
}

// One <li> of a list of notes; `terms` are marked, `score` shown when given.
export function noteItem(note, { terms = NO_TERMS, score = null, onOpen }) {
  const [heading, body] = headingAndBody(note);
  const open = el("button", { type: "button", class: "link note-open", "data-id": note.id }, highlighted(heading, terms));
  open.addEventListener("click", () => onOpen(note.id, open));
  const scoreView =
    score === null
      ? null
      : el("span", { class: "score", title: "score, 0..1" }, el("meter", { min: 0, max: 1, value: score }), el("span", { class: "score-value" }, score.toFixed(3)));
  return el(
    "li",
    { class: "note", "data-id": note.id },
    el("h4", {}, open, scoreView),
    body ? el("p", { class: "snippet" }, highlighted(excerpt(body, terms), terms)) : null,
    el(
      "p",
      { class: "meta" },
      el("span", { class: "group" }, note.groupId),
      " · ",
      el("time", { datetime: note.createdAt }, formatTime(note.createdAt)),
      note.tags.length ? " · " : null,
      note.tags.map((tag) => el("span", { class: "tag" }, tag)),
      knowledgeBadges(note),
    ),
  );
}

// Importance (when not the default), expiry and a superseded mark, for a list item.
function knowledgeBadges(note) {
  return [
    note.importance !== undefined && note.importance !== 0.5 ? el("span", { class: "badge importance" }, `importance ${note.importance}`) : null,
    note.expiresAt ? el("span", { class: "badge expiry", title: "expires; each read moves it out" }, `expires ${formatTime(note.expiresAt)}`) : null,
    note.supersededBy?.length ? el("span", { class: "badge superseded" }, "superseded") : null,
  ];
}

// The ids a note supersedes, newest link first (memory.related, relation supersedes, outgoing).
async function supersededNotes(id) {
  const { items } = await call("memory.related", { id, relation: "supersedes" });
  return items.filter((item) => item.direction === "out");
}

function parseTags(raw) {
  return [...new Set(raw.split(",").map((tag) => tag.trim()).filter((tag) => tag !== ""))];
}

function sameTags(a, b) {
  return a.length === b.length && a.every((tag, index) => tag === b[index]);
}

// The note view. `onChange()` runs after a save or a delete; `onError(error)` for a failed call
// that is not the note's own (a missing token).
export class NoteView {
  constructor({ onChange, onError }) {
    this.dialog = byId("note-dialog");
    this.onChange = onChange;
    this.onError = onError;
    this.note = null;
    this.opener = null;
    byId("note-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.save();
    });
    byId("note-close").addEventListener("click", () => this.close());
    byId("note-delete").addEventListener("click", () => this.askDelete(true));
    byId("note-delete-cancel").addEventListener("click", () => this.askDelete(false));
    byId("note-delete-confirm").addEventListener("click", () => this.remove());
    this.dialog.addEventListener("close", () => {
      this.note = null;
      if (this.opener && this.opener.isConnected) this.opener.focus();
    });
  }

  async open(id, opener) {
    this.opener = opener ?? null;
    let note;
    try {
      note = await call("memory.get", { id });
    } catch (error) {
      this.onError(error);
      return;
    }
    this.note = note;
    byId("note-heading").textContent = note.title || "Untitled note";
    byId("note-meta").replaceChildren(
      `${note.projectId} · created ${formatTime(note.createdAt)} · ${note.namespace}`,
      note.source ? ` · source ${note.source}` : "",
      ` · ${note.expiresAt ? `expires ${formatTime(note.expiresAt)}` : "never expires"}`,
    );
    byId("note-title").value = note.title ?? "";
    byId("note-text").value = note.text;
    byId("note-tags").value = note.tags.join(", ");
    byId("note-group").value = note.groupId;
    byId("note-importance").value = String(note.importance);
    byId("note-supersedes").value = "";
    byId("note-error").textContent = "";
    this.askDelete(false);
    if (!this.dialog.open) this.dialog.showModal();
    byId("note-text").focus();
    await this.showLinks(note);
  }

  // The supersession chain (newer notes, this one, the notes it supersedes) and the graph.
  async showLinks(note) {
    const chain = byId("note-chain");
    const graph = byId("note-graph-box");
    let older;
    let around;
    try {
      [older, around] = await Promise.all([supersededNotes(note.id), neighbourhood(note)]);
    } catch (error) {
      if (error.code === undefined) this.onError(error);
      return;
    }
    if (this.note?.id !== note.id) return;
    const item = (id, text, cls) =>
      el("li", { class: cls }, el("button", { type: "button", class: "link", "data-id": id, onclick: (e) => this.open(id, e.currentTarget) }, text));
    const newer = note.supersededBy.map((id) => item(id, around.nodes.get(id)?.note.title || around.nodes.get(id)?.note.text || id, "newer"));
    chain.replaceChildren(
      newer.length || older.length
        ? el(
            "ol",
            { class: "chain", id: "chain-list" },
            newer,
            el("li", { class: "current" }, note.title || note.text.split("\n")[0]),
            older.map((o) => item(o.id, o.note.title || o.note.text, "older")),
          )
        : el("p", { class: "muted" }, "Neither supersedes nor superseded."),
    );
    graph.replaceChildren(graphView(around, (id, opener) => this.open(id, opener)));
  }

  close() {
    if (this.dialog.open) this.dialog.close();
  }

  askDelete(asking) {
    byId("note-confirm").hidden = !asking;
    byId("note-delete").disabled = asking;
    if (asking) byId("note-delete-confirm").focus();
  }

  patch() {
    const note = this.note;
    const patch = {};
    const title = byId("note-title").value.trim();
    if ((title || null) !== (note.title ?? null)) patch.title = title || null;
    const text = byId("note-text").value;
    if (text !== note.text) patch.text = text;
    const tags = parseTags(byId("note-tags").value);
    if (!sameTags(tags, note.tags)) patch.tags = tags;
    const group = byId("note-group").value.trim();
    if (group !== note.groupId) patch.groupId = group;
    const importance = Number(byId("note-importance").value);
    if (byId("note-importance").value.trim() !== "" && importance !== note.importance) patch.importance = importance;
    const older = byId("note-supersedes").value.split(/[\s,]+/).filter((id) => id !== "");
    if (older.length) patch.supersedes = older;
    return patch;
  }

  async save() {
    if (!this.note) return;
    const patch = this.patch();
    if (Object.keys(patch).length === 0) {
      byId("note-error").textContent = "Nothing changed.";
      return;
    }
    await this.run(() => call("memory.update", { id: this.note.id, patch }));
  }

  async remove() {
    if (!this.note) return;
    await this.run(() => call("memory.delete", { id: this.note.id }));
  }

  async run(action) {
    byId("note-error").textContent = "";
    try {
      await action();
    } catch (error) {
      if (error.code === undefined) {
        this.close();
        this.onError(error);
      } else {
        const field = error.data?.field ? ` (${error.data.field})` : "";
        byId("note-error").textContent = `${error.message}${field}`;
      }
      return;
    }
    this.close();
    this.onChange();
  }
}
