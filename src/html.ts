// Text placed in HTML or XML (pages, the API reference, e-mail, SVG logos, the console, the widgets):
// one escaper and the escaping template built on it, imported by every layer that writes markup, so
// it imports nothing itself.

/** &, <, >, " and ' as entities: safe in element text and in quoted attribute values alike. */
export const escapeHtml = (text: string) =>
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
