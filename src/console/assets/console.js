// The console's script: "Copy" buttons for a secret shown once, push notifications (push.js) where offered, and coin suggestions in coin fields (coin-search.js). The pages work without it.
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const text = document.getElementById(button.dataset.copy)?.textContent ?? '';
    await navigator.clipboard.writeText(text);
    button.textContent = 'Copied';
  });
}

// the account page's "Notify this browser" (assets/push.js), loaded where the page offers it
if (document.getElementById('push-subscribe')) import('./push.js');

// the alarm and widget forms' coin fields suggest coins as one types (assets/coin-search.js)
if (document.querySelector('input[data-coin-search]')) import('./coin-search.js');
