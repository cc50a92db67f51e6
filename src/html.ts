// Text placed in HTML or XML (pages, the API reference, e-mail, SVG logos): one escaper, imported by
// every layer that writes markup, so it imports nothing itself.

/** &, <, >, " and ' as entities: safe in element text and in quoted attribute values alike. */
export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
