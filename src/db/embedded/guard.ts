// What a non-superuser client (the analyst) may not send to the embedded database. PGlite is one
// session logged in as the superuser: the multiplexer switches it to the client's role with
// SET SESSION AUTHORIZATION, and anything that switches it back would be a way out. RESET ROLE
// and SET ROLE are harmless under a session authorization (checked: the session user stays the
// analyst), but SET/RESET SESSION AUTHORIZATION and set_config('session_authorization', …) are
// not, because the authenticated user is still the superuser. So these are refused before they
// reach the backend, and the multiplexer checks the session user again after every batch.
//
// The check works on the statement's tokens, not on its raw text: comments are dropped, string
// literals are blanked (a string is data until something executes it, and everything that
// executes strings is refused here or cannot reach set_config), quoted identifiers are unquoted
// and every word is lowercased. A text the lexer cannot read is refused.

/** Rules over the normalized token text: words separated by single spaces. */
const FORBIDDEN: [RegExp, string][] = [
  [/\b(set|reset)( (session|local))* role\b/, 'changing the role'],
  [/\b(set|reset)( (session|local))* session authorization\b/, 'changing the session authorization'],
  [/\bdiscard all\b/, 'DISCARD ALL'],
  // They name prepared statements across the multiplexer's per-client namespaces (the protocol's
  // named statements stay available).
  [/\b(prepare|execute|deallocate)\b/, 'PREPARE, EXECUTE and DEALLOCATE'],
  [/\bset_config\b/, 'set_config'],
  [/\bpg_settings\b/, 'pg_settings'],
  // Anything that would run SQL built from strings at execution time.
  [/(^|; )do\b/, 'DO blocks'],
  [/\bcreate( or replace)? (function|procedure|aggregate|trigger|language|extension|event trigger)\b/, 'creating functions'],
  [/\b(query_to_xml|query_to_xmlschema|query_to_xml_and_xmlschema|ts_stat|ts_rewrite)\b/, 'functions that run SQL text'],
  // The lexer assumes standard strings; turning them off would let a literal hide a statement.
  [/\b(standard_conforming_strings|backslash_quote)\b/, 'string syntax settings'],
];

/** Returns why the statement is refused, or null when it may run. */
export function refusal(text: string): string | null {
  const normalized = normalize(text);
  if (normalized === null) return 'SQL text the multiplexer cannot read';
  for (const [pattern, what] of FORBIDDEN) if (pattern.test(normalized)) return what;
  return null;
}

const WORD = /[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*/y;
const DOLLAR_TAG = /\$([A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;

/** Token text of a statement (lowercased words, `'` for each string, punctuation), or null if unreadable. */
export function normalize(text: string): string | null {
  const out: string[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    const next = text[i + 1];
    if (/\s/.test(c)) {
      i++;
    } else if (c === '-' && next === '-') {
      const end = text.indexOf('\n', i);
      i = end === -1 ? n : end + 1;
    } else if (c === '/' && next === '*') {
      // Block comments nest in PostgreSQL.
      let depth = 1;
      i += 2;
      while (i < n && depth > 0) {
        if (text.startsWith('/*', i)) (depth++, (i += 2));
        else if (text.startsWith('*/', i)) (depth--, (i += 2));
        else i++;
      }
      if (depth > 0) return null;
    } else if (c === "'" || ((c === 'e' || c === 'E') && next === "'")) {
      const escapes = c !== "'";
      i = skipString(text, escapes ? i + 1 : i, escapes);
      if (i < 0) return null;
      out.push("'");
    } else if ((c === 'u' || c === 'U') && next === '&' && (text[i + 2] === "'" || text[i + 2] === '"')) {
      const quote = text[i + 2]!;
      if (quote === "'") {
        i = skipString(text, i + 2, false);
        if (i < 0) return null;
        out.push("'");
      } else {
        // A Unicode-escaped identifier could spell any name: unreadable rather than decoded.
        return null;
      }
    } else if (c === '"') {
      const end = skipQuoted(text, i);
      if (end < 0) return null;
      out.push(text.slice(i + 1, end - 1).replaceAll('""', '"').toLowerCase().replace(/\s+/g, '_'));
      i = end;
    } else if (c === '$') {
      DOLLAR_TAG.lastIndex = i;
      const tag = DOLLAR_TAG.exec(text);
      if (tag) {
        const end = text.indexOf(tag[0], i + tag[0].length);
        if (end < 0) return null;
        out.push("'");
        i = end + tag[0].length;
      } else {
        // $1 parameters
        let j = i + 1;
        while (j < n && /[0-9]/.test(text[j]!)) j++;
        out.push(text.slice(i, j));
        i = j;
      }
    } else {
      WORD.lastIndex = i;
      const word = WORD.exec(text);
      if (word) {
        out.push(word[0].toLowerCase());
        i += word[0].length;
      } else {
        out.push(c);
        i++;
      }
    }
  }
  return out.join(' ');
}

/** Index after the string literal opening at `start` (a quote), or -1 if it never closes. */
function skipString(text: string, start: number, escapes: boolean): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text[i]!;
    if (escapes && c === '\\') i += 2;
    else if (c === "'" && text[i + 1] === "'") i += 2;
    else if (c === "'") return i + 1;
    else i++;
  }
  return -1;
}

function skipQuoted(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    if (text[i] === '"' && text[i + 1] === '"') i += 2;
    else if (text[i] === '"') return i + 1;
    else i++;
  }
  return -1;
}
