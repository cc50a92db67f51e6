// The console's only script: "Copy" buttons for a secret shown once. The pages work without it.
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const text = document.getElementById(button.dataset.copy)?.textContent ?? '';
    await navigator.clipboard.writeText(text);
    button.textContent = 'Copied';
  });
}
