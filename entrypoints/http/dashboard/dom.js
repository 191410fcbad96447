// Building the page without HTML strings: every value lands in a text node or a property,
// so text from notes is shown as text and never parsed as markup.

const PROPERTIES = new Set(["value", "checked", "disabled", "hidden", "min", "max", "low", "high", "optimum"]);

export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (PROPERTIES.has(name)) node[name] = value;
    else if (name === "style" || name === "innerHTML" || name === "outerHTML") throw new Error(`el: ${name} is not allowed`);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

export function byId(id) {
  return document.getElementById(id);
}

export function section(title, ...children) {
  return el("section", { class: "panel" }, el("h3", {}, title), ...children);
}

export function formatBytes(bytes) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

export function formatTime(iso) {
  return iso ? iso.replace("T", " ").replace(/(\.\d+)?Z$/, " UTC") : "";
}

export function countTable(caption, counts, keyHeading) {
  const rows = Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return el(
    "table",
    {},
    el("caption", { class: "muted" }, caption),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, keyHeading), el("th", { scope: "col", class: "num" }, "notes"))),
    el(
      "tbody",
      {},
      rows.length === 0 ? el("tr", {}, el("td", { colspan: 2, class: "muted" }, "none")) : null,
      rows.map(([key, count]) => el("tr", {}, el("td", {}, key), el("td", { class: "num" }, count))),
    ),
  );
}
