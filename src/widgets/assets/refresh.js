// A widget's live update: every max-age seconds (the page's data-refresh) while it is visible, the
// widget asks for its own URL again through the browser's cache, which revalidates with the ETag
// (a 304 costs no page view); a new answer (new prices, or a refusal: a revoked key) replaces the body.
// Same origin only; no other request.
const seconds = Number(document.documentElement.dataset.refresh);
let seen = null;
async function poll() {
  if (document.hidden) return;
  try {
    const response = await fetch(location.href, { cache: 'no-cache', credentials: 'omit' });
    const etag = response.headers.get('etag');
    if (etag && etag === seen) return;
    seen = etag;
    const next = new DOMParser().parseFromString(await response.text(), 'text/html');
    document.body.replaceChildren(...document.adoptNode(next.body).childNodes);
  } catch {
    // offline for a moment: the next poll tries again
  }
}
if (seconds > 0) setInterval(poll, seconds * 1000);
