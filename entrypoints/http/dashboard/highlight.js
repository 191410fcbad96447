// Marking a query's terms in a note, the way the keyword index reads them (adapters/keyword_index.py):
// words are runs of letters, digits and "_", NFKC-normalized and lower-cased; function words are
// skipped; English words are lightly stemmed, so "painted" matches "paints"; in Chinese, Japanese
// and Korean text each character of the query counts. The marks are <mark> elements around text
// nodes: note text is never parsed as HTML.

import { el } from "./dom.js";

const STOPWORDS = new Set(
  (
    // English
    "a about above after again against all also am an and any are as at be because been before being " +
    "below between both but by can cannot could d did do does doing down during each few for from " +
    "further get got had has have having he her here hers herself him himself his how i if in into is " +
    "it its itself just ll m me more most my myself no nor not of off on once only or other ought our " +
    "ours ourselves out over own re s same she should so some such t than that the their theirs them " +
    "themselves then there these they this those through to too under until up ve very was we were " +
    "what when where which while who whom why will with would you your yours yourself yourselves " +
    // Spanish
    "al algo como con cual cuando cómo cuándo de del donde dónde el ella en entre es esa ese eso esta " +
    "este esto hay la las le les lo los me mi mis muy más nos o para pero por que qué se sin sobre su " +
    "sus te tu tus un una uno unos y ya yo él " +
    // French
    "au aux ce ces dans des du elle est et il ils je la le les leur leurs ma mes mon ne nous on ou par " +
    "pas pour qui quoi sa se ses son sont sur ta tes ton tu une vous à " +
    // German
    "als auch auf das dem den der des die du ein eine einer eines er es für ich ihr im ist mit nicht " +
    "sie sind und von wann was wie wir wo zu"
  ).split(" "),
);

const SUFFIXES = [["ies", "y", 5], ["sses", "ss", 5], ["ing", "", 6], ["ed", "", 5], ["ly", "", 6], ["es", "", 5], ["s", "", 4]];
const WORD = /[\p{L}\p{N}\p{M}_]+/gu;
const CJK = /[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]/u;
const ASCII_LETTERS = /^[a-z]+$/;

export function stem(word) {
  if (word.length <= 3 || !ASCII_LETTERS.test(word)) return word;
  for (const [suffix, replacement, shortest] of SUFFIXES) {
    if (word.endsWith(suffix) && word.length >= shortest && !(suffix === "s" && word.endsWith("ss"))) {
      word = word.slice(0, word.length - suffix.length) + replacement;
      const last = word[word.length - 1];
      if ((suffix === "ing" || suffix === "ed") && word.length >= 3 && last === word[word.length - 2] && !"lsz".includes(last)) {
        word = word.slice(0, -1);
      }
      break;
    }
  }
  return word.length > 3 && word.endsWith("e") ? word.slice(0, -1) : word;
}

function normalized(word) {
  return word.normalize("NFKC").toLowerCase();
}

// The terms of a query: stems of its words, and its CJK characters one by one.
export function queryTerms(query) {
  const terms = new Set();
  for (const [raw] of query.matchAll(WORD)) {
    const word = normalized(raw);
    if (STOPWORDS.has(word)) continue;
    terms.add(stem(word));
    for (const char of word) if (CJK.test(char)) terms.add(char);
  }
  return terms;
}

// The ranges [start, end) of `text` that hold a query term.
export function matches(text, terms) {
  const ranges = [];
  if (terms.size === 0) return ranges;
  for (const found of text.matchAll(WORD)) {
    const word = normalized(found[0]);
    if (terms.has(stem(word))) {
      ranges.push([found.index, found.index + found[0].length]);
      continue;
    }
    let offset = found.index;
    for (const char of found[0]) {
      if (CJK.test(char) && terms.has(char)) ranges.push([offset, offset + char.length]);
      offset += char.length;
    }
  }
  return ranges;
}

// `text` as nodes, with every term of `terms` inside a <mark>.
export function highlighted(text, terms) {
  const nodes = [];
  let at = 0;
  for (const [start, end] of matches(text, terms)) {
    if (start > at) nodes.push(document.createTextNode(text.slice(at, start)));
    nodes.push(el("mark", {}, text.slice(start, end)));
    at = end;
  }
  if (at < text.length) nodes.push(document.createTextNode(text.slice(at)));
  return nodes;
}

// A part of `text` at most `size` characters long, around the first term found.
export function excerpt(text, terms, size = 320) {
  if (text.length <= size) return text;
  const first = matches(text, terms)[0];
  const start = first ? Math.max(0, Math.min(first[0] - Math.floor(size / 4), text.length - size)) : 0;
  const end = start + size;
  return `${start > 0 ? "…" : ""}${text.slice(start, end)}${end < text.length ? "…" : ""}`;
}
