// @ts-check
// The build pack as a printable page: the rules' Markdown, rendered here (no library), with print CSS.

import { api } from "../api.js";
import { h, copyButton } from "../ui.js";

export async function packView(id) {
  const markdown = await api(`/projects/${id}/pack`, { accept: "text/markdown" });
  const doc = h("article", { class: "pack", "aria-label": "Build pack" }, renderMarkdown(markdown));
  const download = h(
    "a",
    {
      class: "button",
      download: `build-pack-${id}.md`,
      href: URL.createObjectURL(new Blob([markdown], { type: "text/markdown" })),
    },
    "Download Markdown",
  );
  return h(
    "div",
    { class: "view pack-page" },
    h(
      "div",
      { class: "no-print toolbar" },
      h("a", { href: `#/projects/${id}` }, "← Project"),
      h("button", { type: "button", class: "primary", "data-read": "", onclick: () => window.print() }, "Print"),
      copyButton("Copy Markdown", markdown),
      download,
    ),
    doc,
  );
}

/** Inline Markdown: **bold**, `code`, and "item N" as a link to the item. */
function inline(text) {
  const out = [];
  const re = /\*\*(.+?)\*\*|`([^`]+)`|\bitem (\d+)\b/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1] !== undefined) out.push(h("strong", {}, inline(m[1])));
    else if (m[2] !== undefined) out.push(h("code", {}, m[2]));
    else out.push(h("a", { href: `#/items/${m[3]}` }, `item ${m[3]}`));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** The subset of Markdown the build pack uses: headings, paragraphs, hard breaks, lists and task lists. */
export function renderMarkdown(md) {
  const nodes = [];
  let para = null;
  let list = null;
  let checks = 0;
  const endPara = () => (para = null);
  const endList = () => (list = null);
  for (const raw of md.split("\n")) {
    const line = raw.replace(/\s+$/, "");
    const hardBreak = / {2}$/.test(raw);
    let m;
    if (!line.trim()) {
      endPara();
      endList();
    } else if ((m = line.match(/^(#{1,6})\s+(.*)$/))) {
      endPara();
      endList();
      nodes.push(h(`h${m[1].length}`, {}, inline(m[2])));
    } else if ((m = line.match(/^\s*[-*]\s+\[( |x|X)\]\s+(.*)$/))) {
      endPara();
      if (!list || list.tagName !== "UL") nodes.push((list = h("ul", { class: "checklist" })));
      checks += 1;
      const id = `check-${checks}`;
      list.append(h("li", {}, h("input", { type: "checkbox", id, checked: m[1] !== " " }), h("label", { for: id }, inline(m[2]))));
    } else if ((m = line.match(/^\s*[-*]\s+(.*)$/))) {
      endPara();
      if (!list || list.tagName !== "UL") nodes.push((list = h("ul")));
      list.append(h("li", {}, inline(m[1])));
    } else if ((m = line.match(/^\s*\d+[.)]\s+(.*)$/))) {
      endPara();
      if (!list || list.tagName !== "OL") nodes.push((list = h("ol")));
      list.append(h("li", {}, inline(m[1])));
    } else {
      endList();
      if (!para) nodes.push((para = h("p")));
      else if (!para.lastChild || para.lastChild.nodeName !== "BR") para.append(" ");
      para.append(...inline(line.trim()));
      if (hardBreak) para.append(h("br"));
    }
  }
  return nodes;
}
