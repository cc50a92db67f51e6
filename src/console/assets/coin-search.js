// Coin fields (input[data-coin-search]) as ARIA 1.2 comboboxes: typing asks /console/coins for at
// most 10 coins (the coin list's own search), shown as a listbox under the field; the arrows move
// through them, Enter puts the chosen coin's slug in the field, Escape closes the list (or, closed,
// clears what was typed). A "many" field holds slugs separated by commas: the suggestions complete
// the last one. Without this script each is a plain text field for slugs, checked by the server.
const WAIT_MS = 150;
const live = document.createElement('div');
live.className = 'visually-hidden';
live.setAttribute('role', 'status');
document.body.append(live);

for (const input of document.querySelectorAll('input[data-coin-search]')) enhance(input);

function enhance(input) {
  const many = input.dataset.coinSearch === 'many';
  const list = document.createElement('ul');
  list.id = `${input.id}-suggestions`;
  list.className = 'suggestions';
  list.setAttribute('role', 'listbox');
  list.setAttribute('aria-label', `Suggestions for ${input.labels?.[0]?.textContent ?? 'the field'}`);
  list.hidden = true;
  input.after(list);
  input.setAttribute('role', 'combobox');
  input.setAttribute('aria-autocomplete', 'list');
  input.setAttribute('aria-expanded', 'false');
  input.setAttribute('aria-controls', list.id);

  let coins = [];
  let active = -1;
  let timer = 0;
  let asked = 0;

  /** The term being typed: the whole field, or its last comma-separated slug. */
  const term = () => (many ? input.value.split(',').at(-1) : input.value).trim();

  function close() {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  }

  function show(found) {
    // the coin highlighted stays highlighted in a newer answer that has it (typing faster than the answers come)
    const kept = active >= 0 ? coins[active]?.slug : undefined;
    coins = found;
    active = -1;
    list.replaceChildren(...found.map((coin, i) => {
      const option = document.createElement('li');
      option.id = `${list.id}-${i}`;
      option.setAttribute('role', 'option');
      option.setAttribute('aria-selected', 'false');
      const name = document.createElement('span');
      name.textContent = `${coin.name} (${coin.symbol})`;
      const slug = document.createElement('span');
      slug.className = 'slug';
      slug.textContent = coin.slug;
      option.append(name, ' ', slug);
      // mousedown, not click: the field keeps its focus
      option.addEventListener('mousedown', (event) => {
        event.preventDefault();
        choose(i);
      });
      return option;
    }));
    const open = found.length > 0;
    list.hidden = !open;
    input.setAttribute('aria-expanded', String(open));
    input.removeAttribute('aria-activedescendant');
    live.textContent = open ? `${found.length} coin${found.length === 1 ? '' : 's'} found: arrows to choose, Enter to pick.` : 'No coin found.';
    const again = kept === undefined ? -1 : found.findIndex((coin) => coin.slug === kept);
    if (again >= 0) highlight(again);
  }

  function highlight(next) {
    if (coins.length === 0) return;
    active = next % coins.length;
    for (const [i, option] of [...list.children].entries()) option.setAttribute('aria-selected', String(i === active));
    const option = list.children[active];
    input.setAttribute('aria-activedescendant', option.id);
    option.scrollIntoView({ block: 'nearest' });
  }

  function choose(i) {
    const slug = coins[i].slug;
    if (many) {
      const parts = input.value.split(',').map((part) => part.trim());
      parts[parts.length - 1] = slug;
      input.value = parts.join(',');
    } else {
      input.value = slug;
    }
    close();
    live.textContent = `${coins[i].name} chosen.`;
  }

  async function ask() {
    const typed = term();
    if (typed === '') return close();
    const mine = ++asked;
    try {
      const response = await fetch(`/console/coins?q=${encodeURIComponent(typed)}`, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
      const body = response.ok ? await response.json() : { data: [] };
      // an older answer arriving after a newer one is dropped
      if (mine === asked && document.activeElement === input) show(body.data ?? []);
    } catch {
      if (mine === asked) close();
    }
  }

  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(ask, WAIT_MS);
  });
  input.addEventListener('keydown', (event) => {
    const open = !list.hidden;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      if (!open) return void ask();
      highlight(event.key === 'ArrowDown' ? active + 1 : active <= 0 ? coins.length - 1 : active - 1);
    } else if (event.key === 'Enter' && open && active >= 0) {
      // picks the coin; the form is sent by the next Enter
      event.preventDefault();
      choose(active);
    } else if (event.key === 'Escape') {
      if (open) close();
      else input.value = '';
      event.preventDefault();
    }
  });
  input.addEventListener('blur', close);
}
