// Compound interest with periodic contributions, on the calendar of periods.ts.
//
// Rules (spec 1.3.0 / 1.3.1):
// - `ratePercent` is the nominal annual rate; a full compounding period earns rate / periods-per-year
//   (periods.ts: daily 365, weekly 365/7, monthly 12, quarterly 4, annually 1).
// - Within a compounding period interest is simple: a balance held for a fraction f of the period
//   earns f x the period's rate. It is credited (and starts compounding) at the end of the period.
//   So a deposit made mid-period earns pro-rata interest for the rest of that period, and a final
//   partial period (duration not a whole number of periods) earns pro-rata simple interest on the fraction.
// - Contributions are made at the end of each contribution interval (the k-th at k intervals),
//   and every one at or before the end of the duration counts: floor(duration / interval) of them.
//   When a deposit and a compounding date fall on the same instant, the period's interest is
//   credited first, so that deposit starts earning in the next period (an ordinary annuity).
// - Compounding frequency and contribution frequency are independent. `never` compounds nothing:
//   each deposit earns simple interest at the annual rate until the end.
import { Dec, type DecimalInput, FREQUENCIES, MAX_TICKS, TICKS_PER_YEAR, amount, money, percentOfNumber, type Frequency } from './periods.ts';

export interface GrowthInput {
  principal: DecimalInput;
  ratePercent: DecimalInput;
  compounding: Frequency | 'never';
  /** duration in ticks (periods.ts); at most 50 years */
  ticks: DecimalInput;
  contribution?: DecimalInput;
  contributionFrequency?: Frequency;
}

export interface Growth {
  finalBalance: Dec;
  /** principal + every contribution made */
  totalContributions: Dec;
  totalInterest: Dec;
  contributions: number;
  /** full compounding periods plus the fraction of the last one (null for `never`) */
  compoundingPeriods: Dec | null;
}

export function grow(input: GrowthInput): Growth {
  const ticks = new Dec(input.ticks);
  if (ticks.isNeg() || ticks.gt(MAX_TICKS)) throw new RangeError('duration must be between 0 and 50 years.');
  const rate = new Dec(input.ratePercent);
  const principal = new Dec(input.principal);
  const contribution = new Dec(input.contribution ?? 0);
  const depositTicks = contribution.isZero() ? null : FREQUENCIES[input.contributionFrequency ?? 'monthly'].ticks;
  const deposits = depositTicks === null ? 0 : ticks.divToInt(depositTicks).toNumber();
  const totalContributions = principal.plus(contribution.mul(deposits));
  const result = (finalBalance: Dec, compoundingPeriods: Dec | null): Growth => ({
    finalBalance, totalContributions, totalInterest: finalBalance.minus(totalContributions), contributions: deposits, compoundingPeriods,
  });

  if (input.compounding === 'never') {
    // Simple interest: the principal earns r x T, the k-th deposit (at k x L) earns r x (T - kL), so
    // the deposits earn C x r x (nT - L n(n+1)/2) together. T, L in years: ticks / TICKS_PER_YEAR.
    const yearRate = rate.div(100 * TICKS_PER_YEAR);
    const depositTime = ticks.mul(deposits).minus(new Dec(depositTicks ?? 0).mul(deposits).mul(deposits + 1).div(2));
    const interest = principal.mul(ticks).plus(contribution.mul(depositTime)).mul(yearRate);
    return result(totalContributions.plus(interest), null);
  }

  // The schedule repeats every `cycle` ticks (when credit and deposit dates coincide again), and
  // one cycle maps a starting balance x to a x + b. Simulate one cycle to find a and b, apply it
  // m times in closed form, then simulate what is left. So 50 years of daily compounding with
  // daily deposits cost a few operations, not 18250 steps.
  const period = FREQUENCIES[input.compounding];
  const cycle = depositTicks === null ? period.ticks : lcm(period.ticks, depositTicks);
  const periodRate = rate.mul(period.ticks).div(100 * TICKS_PER_YEAR);
  const schedule = { periodTicks: period.ticks, periodRate, depositTicks, contribution };
  const cycles = ticks.divToInt(cycle);
  const one = simulate(schedule, new Dec(cycle));
  // a^m x + b (a^m - 1) / (a - 1); for a = 1 (a zero rate) the sum is m b
  const am = one.a.pow(cycles);
  const growth = one.a.eq(1) ? one.b.mul(cycles) : one.b.mul(am.minus(1)).div(one.a.minus(1));
  const afterCycles = principal.mul(am).plus(growth);
  const rest = simulate(schedule, ticks.minus(cycles.mul(cycle)));
  return result(afterCycles.mul(rest.a).plus(rest.b), ticks.div(period.ticks));
}

interface Schedule {
  periodTicks: number;
  periodRate: Dec;
  depositTicks: number | null;
  contribution: Dec;
}

/**
 * The event walk over `span` ticks from a date where both schedules start: interest accrues on
 * the balance, is credited at each period end (and at the end of the span), deposits are added
 * after the credit of the same instant. The balance is kept as a x start + b.
 */
function simulate(schedule: Schedule, span: Dec) {
  const { periodTicks, periodRate, contribution } = schedule;
  const depositTicks = schedule.depositTicks ?? Infinity;
  let a = new Dec(1);
  let b = new Dec(0);
  let accruedA = new Dec(0);
  let accruedB = new Dec(0);
  let now = 0;
  let nextCredit = periodTicks;
  let nextDeposit = depositTicks;
  const accrue = (ticks: DecimalInput) => {
    // a full period earns the period rate; a part of one earns its fraction of it
    const factor = ticks === periodTicks ? periodRate : periodRate.mul(ticks).div(periodTicks);
    accruedA = accruedA.plus(a.mul(factor));
    accruedB = accruedB.plus(b.mul(factor));
  };
  const credit = () => {
    a = a.plus(accruedA);
    b = b.plus(accruedB);
    accruedA = new Dec(0);
    accruedB = new Dec(0);
  };
  for (;;) {
    const next = Math.min(nextCredit, nextDeposit);
    if (span.lt(next)) {
      accrue(span.minus(now));
      credit();
      break;
    }
    accrue(next - now);
    now = next;
    if (next === nextCredit) {
      credit();
      nextCredit += periodTicks;
    }
    if (next === nextDeposit) {
      b = b.plus(contribution);
      nextDeposit += depositTicks;
    }
    if (span.eq(next)) {
      credit();
      break;
    }
  }
  return { a, b };
}

const gcd = (x: number, y: number): number => (y === 0 ? x : gcd(y, x % y));
const lcm = (x: number, y: number) => (x / gcd(x, y)) * y;

export const RATE_NOTE =
  'rate is the nominal annual rate in percent: each compounding period earns rate / periods-per-year ' +
  '(daily 365, weekly 365/7, monthly 12, quarterly 4, annually 1; a year is 365 days = 12 months), with simple interest within a period, ' +
  'so a final partial period earns pro-rata simple interest on its fraction. ' +
  'Contributions are made at the end of each contribution interval and every one inside the duration counts.';

/**
 * The response data of GET /calculators/compound-interest: the reference's fields as JSON numbers
 * rounded once (money to the cent, roi in percent to 2 decimals); today's extra fields as they were.
 */
export function compoundInterest(input: GrowthInput) {
  const growth = grow(input);
  return {
    final_balance: money(growth.finalBalance),
    total_contributions: money(growth.totalContributions),
    total_interest: money(growth.totalInterest),
    roi: percentOfNumber(growth.totalInterest, growth.totalContributions),
    principal: amount(new Dec(input.principal)),
    contributions: growth.contributions,
    compounding_periods: growth.compoundingPeriods === null ? null : growth.compoundingPeriods.toSignificantDigits(15).toFixed(),
  };
}
