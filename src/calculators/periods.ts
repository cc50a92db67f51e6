// The calendar and number conventions that all calculators share.
//
// Calendar: a year is 365 days, which is also 12 months. A week is 7 days, a quarter 3 months.
// Time is counted in ticks. There are 4380 ticks in a year (4380 is the lcm of 365 and 12), so every
// step of every frequency and every duration unit is a whole number of ticks: a day is 12, a week
// 84, a month 365, a quarter 1095 and a year 4380. Interest schedules never use a float.
//
// Rates follow the nominal convention: interest accrues at an annual rate r (in percent) spread
// evenly over the 365 days, and the compounding frequency decides when it is credited. So each
// compounding period earns r / periods-per-year: daily r/365, weekly r x 7/365 (a year holds 365/7
// weeks), monthly r/12, quarterly r/4, annually r; more frequent compounding never loses.

import { Decimal } from 'decimal.js';

/** Every calculator computes with this: 50 significant digits, and ties round to even. */
export const Dec = Decimal.clone({ precision: 50, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -60, toExpPos: 60 });
export type Dec = InstanceType<typeof Dec>;
/** what a calculator accepts for a number: a decimal string, a Decimal or an integer */
export type DecimalInput = Decimal.Value;

export const TICKS_PER_YEAR = 4380;
export const MAX_YEARS = 50;
export const MAX_TICKS = MAX_YEARS * TICKS_PER_YEAR;

/** Each frequency's step in ticks; periods per year = TICKS_PER_YEAR / ticks. */
export const FREQUENCIES = {
  daily: { ticks: 12 },
  weekly: { ticks: 84 },
  monthly: { ticks: 365 },
  quarterly: { ticks: 1095 },
  annually: { ticks: 4380 },
} as const;
export type Frequency = keyof typeof FREQUENCIES;
/** The accepted names: the reference says `annually` for compound interest and `yearly` elsewhere, so both are accepted. */
export const FREQUENCY_NAMES = ['daily', 'weekly', 'monthly', 'quarterly', 'annually', 'yearly'] as const;
export type FrequencyName = (typeof FREQUENCY_NAMES)[number];
export const frequency = (name: FrequencyName): Frequency => (name === 'yearly' ? 'annually' : name);

export const DURATION_UNITS = { days: 12, weeks: 84, months: 365, years: 4380 } as const;
export type DurationUnit = keyof typeof DURATION_UNITS;
export const DURATION_UNIT_NAMES = Object.keys(DURATION_UNITS) as DurationUnit[];

/** A duration in ticks: whole for whole units, a fraction for e.g. 0.1 days. */
export const durationTicks = (duration: DecimalInput, unit: DurationUnit): Dec => new Dec(duration).mul(DURATION_UNITS[unit]);

/** The largest duration of this unit within MAX_YEARS (50 years = 18250 days = 2607 weeks = 600 months). */
export const maxDuration = (unit: DurationUnit) => Math.floor(MAX_TICKS / DURATION_UNITS[unit]);

/**
 * Output of money, prices and quantities: a decimal string of 15 significant digits (the rounding
 * the Conversion group uses), never in exponent notation, without trailing zeros.
 */
export const amount = (value: Dec) => value.toSignificantDigits(15).toFixed();
/** Output of a percentage: a decimal string with 4 decimals at most (as the coins' changes). */
export const percent = (value: Dec) => value.toDecimalPlaces(4).toFixed();
/** `part` as a percentage of `whole`; null when `whole` is 0. */
export const percentOf = (part: Dec, whole: Dec) => (whole.isZero() ? null : percent(part.div(whole).mul(100)));

// The reference's JSON numbers: everything is computed in Dec and rounded here once, at the output
// half away from zero, as money is shown (+ 0: a tiny negative that rounds to zero is 0, not -0).
const toNumber = (value: Dec, places: number) => value.toDecimalPlaces(places, Dec.ROUND_HALF_UP).toNumber() + 0;
/** Money (USD) as a JSON number, to the cent. */
export const money = (value: Dec) => toNumber(value, 2);
/** A coin quantity as a JSON number, to 10 decimals. */
export const quantity = (value: Dec) => toNumber(value, 10);
/** A percentage as a JSON number, to 2 decimals. */
export const percentNumber = (value: Dec) => toNumber(value, 2);
/** `part` as a percentage of `whole`, a JSON number; null when `whole` is 0. */
export const percentOfNumber = (part: Dec, whole: Dec) => (whole.isZero() ? null : percentNumber(part.div(whole).mul(100)));
