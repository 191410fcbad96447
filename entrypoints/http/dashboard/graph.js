// The links around a note as a plain SVG graph (memory.related, two steps out): the note in
// the middle, the notes linked to it on a first ring, theirs on a second. An arrow points from a
// link's source to its target; "supersedes" links are drawn apart. Clicking a node opens it.
// No library and no network beyond /rpc: the page works offline.

import { el } from "./dom.js";
import { call } from "./rpc.js";

const SVG = "http://www.w3.org/2000/svg";
const SIZE = 420;
const RINGS = [0, 110, 185];
const MAX_NODES = 40;
const LABEL_CHARS = 22;

function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  for (const child of children) if (child) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

function label(note) {
  const text = (note.title || note.text).trim().split("\n")[0];
  return text.length > LABEL_CHARS ? `${text.slice(0, LABEL_CHARS)}…` : text;
}

// Nodes (id -> {note, depth}) and links ("from to relation" -> {from, to, relation}) within two steps.
export async function neighbourhood(root) {
  const nodes = new Map([[root.id, { note: root, depth: 0 }]]);
  const links = new Map();
  let frontier = [root.id];
  for (let depth = 1; depth < RINGS.length && frontier.length; depth += 1) {
    const next = [];
    for (const id of frontier) {
      const { items } = await call("memory.related", { id });
      for (const item of items) {
        const [from, to] = item.direction === "out" ? [id, item.id] : [item.id, id];
        links.set(`${from} ${to} ${item.relation}`, { from, to, relation: item.relation });
        if (!nodes.has(item.id) && nodes.size < MAX_NODES) {
          nodes.set(item.id, { note: item.note, depth });
          next.push(item.id);
        }
      }
    }
    frontier = next;
  }
  return { nodes, links: [...links.values()].filter((l) => nodes.has(l.from) && nodes.has(l.to)) };
}

function positions(nodes) {
  const byDepth = new Map();
  for (const [id, { depth }] of nodes) byDepth.set(depth, [...(byDepth.get(depth) ?? []), id]);
  const at = new Map();
  for (const [depth, ids] of byDepth) {
    ids.forEach((id, index) => {
      const angle = (2 * Math.PI * index) / ids.length - Math.PI / 2 + depth * 0.3;
      at.set(id, [SIZE / 2 + RINGS[depth] * Math.cos(angle), SIZE / 2 + RINGS[depth] * Math.sin(angle)]);
    });
  }
  return at;
}

// The graph as an <svg> (a "No links yet" paragraph when there are none).
export function graphView({ nodes, links }, onOpen) {
  if (links.length === 0) return el("p", { class: "muted", id: "note-graph" }, "No links yet.");
  const at = positions(nodes);
  const marker = (name) =>
    svg("marker", { id: name, viewBox: "0 0 10 10", refX: 19, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, svg("path", { d: "M0,0 L10,5 L0,10 z", class: name }));
  const edges = links.map(({ from, to, relation }) => {
    const [[x1, y1], [x2, y2]] = [at.get(from), at.get(to)];
    const kind = relation === "supersedes" ? "supersedes" : "relation";
    return svg(
      "g",
      { class: `edge ${kind}`, "data-from": from, "data-to": to, "data-relation": relation },
      svg("line", { x1, y1, x2, y2, "marker-end": `url(#arrow-${kind})` }),
      svg("text", { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 4, "text-anchor": "middle" }, relation),
    );
  });
  const vertices = [...nodes].map(([id, { note, depth }]) => {
    const [x, y] = at.get(id);
    const node = svg(
      "g",
      { class: `node depth-${depth}`, "data-id": id, tabindex: 0, role: "button", "aria-label": `Open note: ${label(note)}` },
      svg("title", {}, note.title || note.text),
      svg("circle", { cx: x, cy: y, r: depth === 0 ? 12 : 9 }),
      svg("text", { x, y: y + 24, "text-anchor": "middle" }, label(note)),
    );
    const open = () => onOpen(id, node);
    node.addEventListener("click", open);
    node.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        open();
      }
    });
    return node;
  });
  return svg(
    "svg",
    { id: "note-graph", viewBox: `0 0 ${SIZE} ${SIZE}`, role: "group", "aria-label": "Links of this note" },
    svg("defs", {}, marker("arrow-supersedes"), marker("arrow-relation")),
    ...edges,
    ...vertices,
  );
}
