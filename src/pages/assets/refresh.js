// Reloads a page that asks for it (<body data-refresh="seconds">) and lets the reader stop that:
// a page that reloads on its own must offer a way to turn it off (WCAG 2.2.1), which <meta refresh> cannot.
const seconds = Number(document.body.dataset.refresh);
const button = document.getElementById('refresh-toggle');
if (seconds > 0 && button) {
  let timer = setTimeout(() => location.reload(), seconds * 1000);
  button.hidden = false;
  button.addEventListener('click', () => {
    if (timer === null) return location.reload();
    clearTimeout(timer);
    timer = null;
    button.textContent = 'Refresh now';
    document.getElementById('refresh-note').textContent = 'automatic refresh stopped';
  });
}
