// The widget loader: a page includes this script (from the service that serves the widgets) and marks
// where each widget goes; the script puts the widget's <iframe> there. It requests nothing itself.
//   <div data-market-widget="coin-card" data-key="mdw_…" data-coin="bitcoin" data-theme="dark"
//        data-currency="eur" data-locale="de"></div>
//   <script src="https://…/widgets/embed.js" async></script>
(() => {
  const script = document.currentScript;
  const base = new URL(script ? script.src : '/widgets/embed.js', location.href);
  const sizes = { ticker: [undefined, 48], 'coin-card': [320, 190], 'mini-chart': [480, 270] };
  const options = ['key', 'coin', 'coins', 'range', 'theme', 'currency', 'locale'];
  const place = () => {
    for (const slot of document.querySelectorAll('[data-market-widget]')) {
      const kind = slot.dataset.marketWidget;
      if (slot.dataset.marketWidgetPlaced || !Object.hasOwn(sizes, kind)) continue;
      slot.dataset.marketWidgetPlaced = 'true';
      const url = new URL(`/widgets/${kind}`, base);
      for (const name of options) if (slot.dataset[name]) url.searchParams.set(name, slot.dataset[name]);
      const frame = document.createElement('iframe');
      frame.src = url.href;
      frame.title = slot.dataset.title || 'Cryptocurrency price widget';
      // the widget checks the embedding page's origin: send it even where the page's policy sends none
      frame.referrerPolicy = 'origin';
      frame.loading = 'lazy';
      const [width, height] = sizes[kind];
      frame.width = String(slot.dataset.width || width || '100%');
      frame.height = String(slot.dataset.height || height);
      frame.style.border = '0';
      frame.style.maxWidth = '100%';
      slot.replaceChildren(frame);
    }
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', place);
  else place();
})();
