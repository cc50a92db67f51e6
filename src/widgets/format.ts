// Numbers as a widget shows them, in its locale: money from the decimal strings the database gives
// (decimal.js rounds them, Intl.NumberFormat says where the locale puts the sign, the currency, the
// group and decimal separators), percentages from the change figures (already floats in SQL).
import { Decimal } from 'decimal.js';
import { memoized } from '../memo.ts';
import type { Locale } from '../widget-options.ts';

/** The locales a widget may be asked for (?locale=): each with three-digit groups, which formatMoney writes. */

interface Shape {
  /** the parts of a formatted amount of this sign; the number's own parts are replaced */
  parts: Intl.NumberFormatPart[];
  group: string;
  /** whether a four-digit integer is grouped (es, pl: not) */
  groupsFour: boolean;
}

/** How the locale writes an amount in the currency with `digits` decimals: learnt from Intl once per combination. */
const shapeOf = memoized((which: string): Shape => {
  const [locale, currency, digits, sign] = which.split('|') as [string, string, string, string];
  const options: Intl.NumberFormatOptions = currency
    ? { style: 'currency', currency, currencyDisplay: 'narrowSymbol', minimumFractionDigits: Number(digits), maximumFractionDigits: Number(digits) }
    : { minimumFractionDigits: Number(digits), maximumFractionDigits: Number(digits) };
  const format = new Intl.NumberFormat(locale, options);
  const group = new Intl.NumberFormat(locale).formatToParts(1234567).find((part) => part.type === 'group')?.value ?? ',';
  const groupsFour = new Intl.NumberFormat(locale).formatToParts(1234).some((part) => part.type === 'group');
  return { parts: format.formatToParts(sign === '-' ? -1 : 1), group, groupsFour };
}, { max: 1000 });

const NUMBER_PARTS = new Set(['integer', 'group', 'decimal', 'fraction']);

/**
 * A decimal string as the locale writes it, rounded to `digits` decimals (half up, by decimal.js:
 * the value never passes through a float), in `currency` when given. The digits are grouped in
 * threes with the locale's separator.
 */
export function formatDecimal(value: string, locale: Locale, digits: number, currency?: string): string {
  const amount = new Decimal(value);
  const fixed = amount.abs().toFixed(digits, Decimal.ROUND_HALF_UP);
  const negative = amount.isNegative() && !new Decimal(fixed).isZero();
  const shape = shapeOf(`${locale}|${currency ?? ''}|${digits}|${negative ? '-' : '+'}`);
  const [integer, fraction] = fixed.split('.') as [string, string | undefined];
  const grouped = integer.length > 4 || (integer.length === 4 && shape.groupsFour) ? integer.replace(/\B(?=(\d{3})+$)/g, shape.group) : integer;
  let out = '';
  let written = false;
  for (const part of shape.parts) {
    if (!NUMBER_PARTS.has(part.type)) out += part.value;
    else if (part.type === 'decimal') out += part.value + (fraction ?? '');
    else if (part.type === 'integer' && !written) {
      out += grouped;
      written = true;
    }
  }
  return out;
}

/** The decimals a price is shown with: cents from 1 up, else four significant digits (at most 10 decimals). */
export function priceDigits(value: string): number {
  const amount = new Decimal(value).abs();
  if (amount.isZero() || amount.gte(1)) return 2;
  // 0.01234: exponent −2, so 3 + 2 = 5 decimals show 0.01234
  return Math.min(10, 3 - amount.e);
}

/** A price in the widget's currency and locale. */
export const formatPrice = (value: string, locale: Locale, currency: string) => formatDecimal(value, locale, priceDigits(value), currency.toUpperCase());

/** A percentage change (a float from SQL: a display figure already) with its sign: +1.23 %. */
export function formatChange(percent: number | null, locale: Locale): string {
  if (percent === null || !Number.isFinite(percent)) return '–';
  return percentFormat(locale).format(percent / 100);
}
const percentFormat = memoized((locale: string) => new Intl.NumberFormat(locale, { style: 'percent', minimumFractionDigits: 2, maximumFractionDigits: 2, signDisplay: 'exceptZero' }), { max: 100 });
