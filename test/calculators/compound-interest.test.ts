// Compound interest against closed forms, hand-computed cases and properties (fast-check). The
// expected values are worked out here with decimal.js, never copied from a run.
import test from 'ava';
import fc from 'fast-check';
import { compoundInterest, grow, type GrowthInput } from '../../src/calculators/compound-interest.ts';
import { Dec, DURATION_UNITS, FREQUENCIES, TICKS_PER_YEAR, amount, durationTicks, type DurationUnit, type Frequency } from '../../src/calculators/periods.ts';

const years = (n: number) => durationTicks(n, 'years');

test('annual compounding equals P(1+r)^n exactly (at 15 significant digits; the response rounds once to the cent)', (t) => {
  for (const [principal, rate, n] of [['1000', '5', 10], ['2500.75', '7.25', 30], ['1', '100', 50], ['123456.789', '0.01', 1], ['5000', '0', 20]] as const) {
    const input = { principal, ratePercent: rate, compounding: 'annually', ticks: years(n) } as const;
    const expected = new Dec(principal).mul(new Dec(rate).div(100).plus(1).pow(n));
    t.is(amount(grow(input).finalBalance), amount(expected), `${principal} at ${rate} % for ${n} years`);
    const result = compoundInterest(input);
    t.is(result.final_balance, expected.toDecimalPlaces(2, Dec.ROUND_HALF_UP).toNumber(), 'a JSON number to the cent');
    t.is(result.total_contributions, new Dec(principal).toDecimalPlaces(2, Dec.ROUND_HALF_UP).toNumber());
  }
});

test('each period earns rate / periods-per-year: monthly for 2 years is P(1 + r/12)^24, daily for 1 year P(1 + r/365)^365, 52 weeks P(1 + 7r/365)^52', (t) => {
  const monthly = grow({ principal: 1000, ratePercent: 6, compounding: 'monthly', ticks: years(2) });
  t.is(amount(monthly.finalBalance), amount(new Dec(1000).mul(new Dec('1.005').pow(24))));
  const daily = grow({ principal: 1000, ratePercent: 5, compounding: 'daily', ticks: years(1) });
  t.is(amount(daily.finalBalance), amount(new Dec(1000).mul(new Dec(5).div(36500).plus(1).pow(365))));
  // a week is 7/365 of a year, so it earns 5 % x 7/365
  const weekly = grow({ principal: 1000, ratePercent: 5, compounding: 'weekly', ticks: durationTicks(52, 'weeks') });
  t.is(amount(weekly.finalBalance), amount(new Dec(1000).mul(new Dec(35).div(36500).plus(1).pow(52))));
});

test('the continuous limit P e^(rt) is approached from below as the frequency grows', (t) => {
  const limit = new Dec(1000).mul(new Dec('0.05').mul(10).exp());
  const order: Frequency[] = ['annually', 'quarterly', 'monthly', 'weekly', 'daily'];
  const gaps = order.map((compounding) => limit.minus(grow({ principal: 1000, ratePercent: 5, compounding, ticks: years(10) }).finalBalance));
  for (const [i, gap] of gaps.entries()) {
    t.true(gap.isPos(), `${order[i]} stays below the limit`);
    if (i > 0) t.true(gap.lt(gaps[i - 1]!), `${order[i]} is closer than ${order[i - 1]}`);
  }
  t.true(gaps.at(-1)!.div(limit).lt('0.0001'), 'daily is within 0.01 % of continuous compounding');
});

test('a final partial period earns pro-rata simple interest (hand-computed)', (t) => {
  // 7 months quarterly at 12 %: two quarters at 3 %, then a third of a quarter at 3 % simple:
  // 1000 x 1.03^2 = 1060.9; 1060.9 x 0.03 / 3 = 10.609; 1071.509
  const result = compoundInterest({ principal: 1000, ratePercent: 12, compounding: 'quarterly', ticks: durationTicks(7, 'months') });
  // 1071.509 and 71.509 exactly, rounded once to the cent (half away from zero); roi 7.1509 % to 7.15
  t.like(result, { final_balance: 1071.51, total_interest: 71.51, roi: 7.15 });
  t.is(result.compounding_periods, '2.33333333333333');
  // 10 days at 36.5 % compounded weekly: one week at 0.7 %, then 3/7 of the next week simple (0.3 %):
  // 1000 x 1.007 = 1007; 1007 x 1.003 = 1010.021
  const weekly = compoundInterest({ principal: 1000, ratePercent: '36.5', compounding: 'weekly', ticks: durationTicks(10, 'days') });
  t.is(weekly.final_balance, 1010.02); // 1010.021
});

test('a deposit made inside a compounding period earns interest for the rest of it (hand-computed)', (t) => {
  // 100 a month, quarterly at 12 % (3 % a quarter): month 1 earns 3 % x 2/3 = 2, month 2 earns 1, month 3 nothing
  const result = compoundInterest({ principal: 0, ratePercent: 12, compounding: 'quarterly', ticks: durationTicks(3, 'months'), contribution: 100, contributionFrequency: 'monthly' });
  t.like(result, { final_balance: 303, total_contributions: 300, total_interest: 3, contributions: 3 });
});

test('contribution counting at the boundaries: equal frequencies lose no deposit and match the annuity formula', (t) => {
  const cases: [Frequency, number, DurationUnit, number][] = [
    ['daily', 365, 'days', 365], ['daily', 1, 'years', 365], ['weekly', 52, 'weeks', 52], ['weekly', 10, 'years', 521],
    ['monthly', 120, 'months', 120], ['quarterly', 3, 'years', 12], ['annually', 50, 'years', 50],
  ];
  for (const [frequency, duration, unit, deposits] of cases) {
    const result = grow({
      principal: 1000, ratePercent: 5, compounding: frequency, ticks: durationTicks(duration, unit), contribution: 10, contributionFrequency: frequency,
    });
    t.is(result.contributions, deposits, `${frequency} over ${duration} ${unit}`);
    t.true(result.totalContributions.eq(new Dec(10).mul(deposits).plus(1000)));
    if (unit !== 'years' || frequency !== 'weekly') {
      // whole periods only: P(1+i)^n + C((1+i)^n - 1)/i
      const i = new Dec(5).mul(FREQUENCIES[frequency].ticks).div(100 * TICKS_PER_YEAR);
      const g = i.plus(1).pow(deposits);
      t.is(amount(result.finalBalance), amount(g.mul(1000).plus(g.minus(1).div(i).mul(10))), `${frequency} annuity`);
    }
  }
  // a week is 7 days: 14 days hold two weekly deposits, 13 days one; a 365-day year holds 52
  const count = (duration: number, unit: DurationUnit, every: Frequency) =>
    grow({ principal: 1, ratePercent: 1, compounding: 'monthly', ticks: durationTicks(duration, unit), contribution: 1, contributionFrequency: every }).contributions;
  t.is(count(14, 'days', 'weekly'), 2);
  t.is(count(13, 'days', 'weekly'), 1);
  t.is(count(1, 'years', 'weekly'), 52);
  t.is(count(1, 'months', 'daily'), 30);
  t.is(count(2, 'years', 'monthly'), 24);
  t.is(count(6, 'months', 'quarterly'), 2);
});

test('never compounding: simple interest on the principal and on each deposit until the end (hand-computed)', (t) => {
  // 1000 for 2 years at 10 %: 200. 24 monthly deposits of 100, the k-th earning 10 % x (24 - k)/12: 100 x 0.1 x 276/12 = 230
  const result = compoundInterest({ principal: 1000, ratePercent: 10, compounding: 'never', ticks: years(2), contribution: 100, contributionFrequency: 'monthly' });
  t.like(result, { final_balance: 3830, total_contributions: 3400, total_interest: 430, contributions: 24, compounding_periods: null });
});

test('50 years of daily compounding with daily deposits is computed in a few milliseconds', (t) => {
  const started = performance.now();
  const result = grow({ principal: 1000, ratePercent: 5, compounding: 'daily', ticks: years(50), contribution: 1, contributionFrequency: 'daily' });
  t.is(result.contributions, 18250);
  t.true(performance.now() - started < 250);
});

// The straightforward walk, day by day through every event, as the reference for the cycle shortcut.
function reference(input: Required<GrowthInput> & { compounding: Frequency }) {
  const period = FREQUENCIES[input.compounding];
  const every = FREQUENCIES[input.contributionFrequency].ticks;
  const end = new Dec(input.ticks).toNumber();
  let balance = new Dec(input.principal);
  let accrued = new Dec(0);
  let last = 0;
  const periodRate = new Dec(input.ratePercent).mul(period.ticks).div(100 * TICKS_PER_YEAR);
  for (let tick = 1; tick <= Math.ceil(end); tick++) {
    const now = Math.min(tick, end);
    if (now % period.ticks === 0 || now === end) {
      accrued = accrued.plus(balance.mul(periodRate).mul(now - last).div(period.ticks));
      balance = balance.plus(accrued);
      accrued = new Dec(0);
      last = now;
    }
    if (now % every === 0 && !new Dec(input.contribution).isZero()) {
      accrued = accrued.plus(balance.mul(periodRate).mul(now - last).div(period.ticks));
      last = now;
      balance = balance.plus(input.contribution);
    }
  }
  return balance;
}

const frequencies = fc.constantFrom<Frequency>('daily', 'weekly', 'monthly', 'quarterly', 'annually');
const units = fc.constantFrom<DurationUnit>('days', 'weeks', 'months', 'years');
const money = fc.integer({ min: 0, max: 100_000_000 }).map((cents) => new Dec(cents).div(100).toFixed());
const rate = fc.integer({ min: 0, max: 5000 }).map((hundredths) => new Dec(hundredths).div(100).toFixed());
const plan = fc.record({
  principal: money, ratePercent: rate, compounding: frequencies, contribution: money, contributionFrequency: frequencies,
  unit: units, duration: fc.integer({ min: 1, max: 400 }),
}).map(({ unit, duration, ...rest }) => ({ ...rest, ticks: durationTicks(Math.min(duration, Math.floor((10 * DURATION_UNITS.years) / DURATION_UNITS[unit])), unit) }));

test('property: no contribution is lost: total_contributions = principal + count x contribution, count = floor(duration / interval)', (t) => {
  fc.assert(fc.property(plan, (input) => {
    const result = grow(input);
    const count = input.ticks.divToInt(FREQUENCIES[input.contributionFrequency].ticks).toNumber();
    const expectedCount = new Dec(input.contribution).isZero() ? 0 : count;
    return result.contributions === expectedCount
      && result.totalContributions.eq(new Dec(input.contribution).mul(expectedCount).plus(input.principal))
      && result.finalBalance.gte(result.totalContributions);
  }), { numRuns: 200 });
  t.pass();
});

test('property: the final balance never decreases when the rate rises', (t) => {
  fc.assert(fc.property(plan, rate, (input, other) => {
    const [low, high] = [input.ratePercent, other].sort((a, b) => new Dec(a).cmp(b));
    return grow({ ...input, ratePercent: low! }).finalBalance.lte(grow({ ...input, ratePercent: high! }).finalBalance);
  }), { numRuns: 200 });
  t.pass();
});

test('property: the cycle shortcut agrees with the event-by-event walk', (t) => {
  // compared unrounded, to 35 significant digits (the arithmetic keeps 50): two roads to an exact half of the
  // output's last digit (…96875 at 7 places) may land a 1e-42 either side of it and round apart
  fc.assert(fc.property(plan, (input) => {
    const expected = reference(input);
    return grow(input).finalBalance.minus(expected).abs().lte(Dec.max(expected.abs(), 1).mul('1e-35'));
  }), { numRuns: 100 });
  // the case that rounded apart: equal to far below a cent
  const edge = { principal: '0.06', ratePercent: '50', compounding: 'annually', contribution: '221561.64', contributionFrequency: 'monthly', ticks: new Dec(23725) } as const;
  t.true(grow(edge).finalBalance.minus(reference(edge)).abs().lt('1e-30'));
  t.pass();
});
