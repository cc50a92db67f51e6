// The small Markdown subset of the repository's own documents (the served documents, the changelog's
// items) as HTML, every piece of text escaped by the html template — not a general Markdown renderer.
import { headingId, type Html, html, joinHtml } from '../html.ts';

/** In text outside code spans, the leftmost of: a link, bold, emphasis (each may hold the others). */
const SPAN = /\[([^\]]+)\]\(([^)\s]+)\)|\*\*([^*]+)\*\*|(?<=^|\W)_([^_]+)_(?=\W|$)/g;
/** Where a link may lead: this service (a path or an anchor), the web or mail; any other shows its label only. */
const LINKABLE = /^(https?:|\/|#|mailto:)/;

/** Inline Markdown: code spans (left as written), links, bold, emphasis. */
export function inline(text: string): Html {
  return html`${text.split(/(`[^`]*`)/).map((part) =>
    part.length > 1 && part.startsWith('`') && part.endsWith('`') ? html`<code>${part.slice(1, -1)}</code>` : spans(part))}`;
}

function spans(text: string): Html {
  const out: (Html | string)[] = [];
  let done = 0;
  for (const match of text.matchAll(SPAN)) {
    const [whole, label, href, strong, emphasis] = match;
    out.push(text.slice(done, match.index));
    if (label !== undefined) out.push(LINKABLE.test(href!) ? html`<a href="${href}">${spans(label)}</a>` : spans(label));
    else if (strong !== undefined) out.push(html`<strong>${spans(strong)}</strong>`);
    else out.push(html`<em>${spans(emphasis!)}</em>`);
    done = match.index + whole.length;
  }
  out.push(text.slice(done));
  return html`${out}`;
}

/**
 * The Markdown of the repository's documents: headings (with ids), paragraphs, bullet and numbered
 * lists with continuation lines, fenced code and pipe tables.
 */
export function markdownToHtml(markdown: string, idOf: (text: string, level: number) => string = (text) => headingId(text)): Html {
  const lines = markdown.replace(/\r\n/g, '\n').split('\n');
  const out: Html[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (/^```/.test(line)) {
      const code: string[] = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]!); i++) code.push(lines[i]!);
      i++;
      // a block wider than the screen scrolls: focusable, so that a keyboard can scroll it too
      out.push(html`<pre tabindex="0"><code>${code.join('\n')}</code></pre>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      out.push(html`<h${level} id="${idOf(heading[2]!, level)}">${inline(heading[2]!)}</h${level}>`);
      i++;
      continue;
    }
    if (/^\s*\|/.test(line)) {
      const rows: string[][] = [];
      for (; i < lines.length && /^\s*\|/.test(lines[i]!); i++) {
        const cells = lines[i]!.trim().replace(/^\||\|$/g, '').split('|').map((cell) => cell.trim());
        if (!cells.every((cell) => /^:?-+:?$/.test(cell))) rows.push(cells);
      }
      const [head, ...body] = rows;
      // wider than a phone: the table scrolls in a box of its own, which a keyboard can focus and scroll
      out.push(html`<div class="wide" tabindex="0" role="region" aria-label="table"><table><thead><tr>${head!.map((cell) => html`<th>${inline(cell)}</th>`)}</tr></thead><tbody>${body
        .map((row) => html`<tr>${row.map((cell) => html`<td>${inline(cell)}</td>`)}</tr>`)}</tbody></table></div>`);
      continue;
    }
    const item = /^(\s*)([-*]|\d+\.)\s+(.*)$/;
    if (/^([-*]|\d+\.)\s/.test(line)) {
      const ordered = /^\s*\d+\./.test(line);
      const items: string[] = [];
      for (; i < lines.length; i++) {
        const current = lines[i]!;
        const match = item.exec(current);
        if (match && match[1]!.length === 0) items.push(match[3]!);
        else if (current.trim() && /^\s/.test(current) && items.length) items[items.length - 1] += ` ${current.trim()}`;
        else break;
      }
      const list = items.map((text) => html`<li>${inline(text)}</li>`);
      out.push(ordered ? html`<ol>${list}</ol>` : html`<ul>${list}</ul>`);
      continue;
    }
    if (!line.trim()) {
      i++;
      continue;
    }
    const paragraph: string[] = [line.trim()];
    for (i++; i < lines.length && lines[i]!.trim() && !/^(#{1,6}\s|```|\s*\||\s*([-*]|\d+\.)\s)/.test(lines[i]!); i++) paragraph.push(lines[i]!.trim());
    out.push(html`<p>${inline(paragraph.join(' '))}</p>`);
  }
  return joinHtml(out, '\n');
}
