// Text placed in HTML or XML (pages, the API reference, e-mail, SVG logos, the console, the widgets):
// one escaper, the escaping template built on it and the id rule of headings, imported by every layer
// that writes markup, so it imports nothing itself.

/**
 * &, <, >, " and ' as entities: safe in element text and in quoted attribute values alike. Not
 * exported: markup is written with `html`, which escapes what it is given and nothing twice.
 */
const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Markup built by `html`: interpolated as is, never escaped twice. */
export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString() {
    return this.text;
  }
}

type Part = Html | string | number | null | undefined | false | readonly Part[];

const render = (part: Part): string =>
  part instanceof Html ? part.text
    : Array.isArray(part) ? part.map(render).join('')
      : part === null || part === undefined || part === false ? ''
        : escapeHtml(String(part));

/** html`<p>${text}</p>`: text is escaped; Html, arrays of them and numbers go in as they are. */
export const html = (strings: TemplateStringsArray, ...values: Part[]) =>
  new Html(strings.reduce((out, string, i) => out + string + (i < values.length ? render(values[i]!) : ''), ''));

/** Fragments with `separator` between them (`'\n'`, html`<br>`); an array in a template has none. */
export const joinHtml = (parts: readonly Part[], separator: Html | string) =>
  html`${parts.flatMap((part, i) => (i === 0 ? [part] : [separator, part]))}`;

/**
 * The id a heading gets, and so the anchor a link or a deprecation names (`## [0.2.0] - …` → `0.2.0`,
 * `Rate limits` → `rate-limits`): safe in an attribute and in a URL fragment as it is.
 */
export const headingId = (text: string) =>
  text.toLowerCase().replace(/`/g, '').replace(/[^a-z0-9.]+/g, '-').replace(/^-+|-+$/g, '');
