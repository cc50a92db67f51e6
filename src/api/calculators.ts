// Calculators group: DCA, profit/loss and loan vs sell over the service's own prices (one api.*
// call each, sql/functions/700_api_calculators.sql), compound interest and staking without any
// data. The arithmetic is in src/calculators (decimal.js, exact); the reference's money, quantity and
// percentage fields leave as JSON numbers rounded once at the output (periods.ts money, quantity,
// percentNumber), prices and today's extra fields as exact decimal strings.
import { MARKET_CACHE } from '../http/cache.ts';
import { z } from 'zod';
import { compoundInterest, RATE_NOTE } from '../calculators/compound-interest.ts';
import { dca } from '../calculators/dca.ts';
import { loanVsSell } from '../calculators/loan.ts';
import {
  DURATION_UNIT_NAMES, DURATION_UNITS, Dec, FREQUENCY_NAMES, MAX_YEARS, durationTicks, frequency, maxDuration, type DurationUnit,
} from '../calculators/periods.ts';
import { profitLoss } from '../calculators/profit-loss.ts';
import { staking } from '../calculators/staking.ts';
import { defineRoute } from '../http/routes.ts';
import { day, decimal, envelope, int, number, resource, text } from '../http/schemas.ts';
import { query, today } from '../http/validation.ts';
import { booleanFlag, slug as slugOf } from '../validators.ts';

const tag = 'Calculators';
const CURRENCY = 'USD';

/**
 * A query value as a Decimal, or null when it is not a number. zod runs every check even after the
 * format check failed (that failure is reported already), so range checks must not throw on bad input.
 */
const parsed = (value: string) => {
  try {
    return new Dec(value);
  } catch {
    return null;
  }
};

/** A decimal query value (optionally signed) within [min, max]; `above` makes the minimum exclusive. */
const decimalIn = (min: number, max: number, options: { signed?: boolean; above?: boolean } = {}) =>
  (options.signed ? query.signedDecimal() : query.decimal())
    .refine((value) => value.length <= 40, 'At most 40 characters.')
    .refine((value) => {
      const number = parsed(value);
      return !number || ((options.above ? number.gt(min) : number.gte(min)) && number.lte(max));
    }, `Must be ${options.above ? 'greater than' : 'at least'} ${min} and at most ${max}.`);
const percentIn = (max: number, options: { above?: boolean } = {}) => decimalIn(0, max, options);

const slug = slugOf('coin').describe('Coin slug, e.g. bitcoin.');
const frequencyName = z.enum(FREQUENCY_NAMES);

/** Adds an issue on `field` when `duration` of `unit` exceeds the 50-year equivalent. */
const capDuration = (field: string, duration: string | number, unit: DurationUnit, ctx: z.RefinementCtx) => {
  const ticks = parsed(String(duration)) && DURATION_UNITS[unit] ? durationTicks(duration, unit) : null;
  if (ticks && ticks.gt(MAX_YEARS * DURATION_UNITS.years)) {
    ctx.addIssue({ code: 'custom', path: [field], message: `At most ${MAX_YEARS} years (${maxDuration(unit)} ${unit}).` });
  }
};

// Response shapes (src/calculators): the reference's fields are JSON numbers rounded once (money to
// the cent, quantities to 10 decimals, percentages to 2), today's extra fields exact decimal strings.
const money = (description?: string) => number(description ?? 'USD, to the cent.');
const percentNumber = (description: string) => number(`${description} Percent, to 2 decimals.`);
const percentString = (description: string) => decimal(`${description} Percent, 4 decimals at most.`);
const currency = z.literal(CURRENCY);
const noteMeta = z.object({ note: text() });

const DcaBuy = z.object({
  date: day('The buy date.'),
  price: decimal('The close bought at.'),
  price_date: day('The day of that close (the last close before date when date has no bar).'),
  quantity: decimal('Coins bought.'),
  total_invested: decimal(),
  total_quantity: decimal(),
  value: decimal('total_quantity at that day’s close.'),
  profit: decimal(),
});
const DcaResult = resource('DcaResult', z.object({
  summary: z.object({
    purchases: int(),
    invested: money(),
    accumulated: number('Coins, to 10 decimals.'),
    final_value: money(),
    profit: money(),
    roi: percentNumber('profit / invested; null without a purchase.').nullable(),
    total_invested: decimal(),
    total_quantity: decimal(),
    average_price: decimal('null without a purchase.').nullable(),
    current_price: decimal(),
    current_value: decimal(),
  }),
  series: z.array(DcaBuy).nullable().describe('One row per buy with series=true, else null.'),
}));
const ProfitLossResult = resource('ProfitLossResult', z.object({
  buy_price: decimal(),
  sell_price: decimal(),
  quantity: number('Coins, to 10 decimals.'),
  investment_worth: money(),
  total_fees: money(),
  buy_fee_amount: decimal(),
  sell_fee_amount: decimal(),
  profit: money(),
  roi: percentNumber('profit / amount.'),
  buy_price_date: day(),
  sell_price_date: day(),
}));
const CompoundInterestResult = resource('CompoundInterestResult', z.object({
  final_balance: money(),
  total_contributions: money(),
  total_interest: money(),
  roi: percentNumber('total_interest / total_contributions; null when that is 0.').nullable(),
  principal: decimal(),
  contributions: int('Contributions deposited.'),
  compounding_periods: decimal('null without compounding.').nullable(),
}));
// Declared from the fields of src/calculators/loan.ts (their values follow the loan model there).
const LoanVsSellResult = resource('LoanVsSellResult', z.object({
  current_price: decimal(),
  collateral_value: money(),
  max_loan: money(),
  loan_possible: z.boolean(),
  loan_scenario: z.object({
    monthly_payment: money(),
    total_payback: money(),
    total_interest: money(),
    net_value: money(),
    loan_amount: decimal(),
    ltv: percentString('Loan to collateral value.'),
    term_months: int(),
    total_repayment: decimal(),
    monthly_payment_exact: decimal('The annuity instalment, unrounded.'),
    liquidation_ltv: percentString('LTV at liquidation.'),
    liquidation_price: decimal(),
    liquidation_price_at_maturity: decimal(),
    crypto_kept: decimal(),
    future_price: decimal(),
    end_value: decimal(),
  }),
  sell_scenario: z.object({
    crypto_sold: number('Coins, to 10 decimals.'),
    capital_gains_tax: money(),
    net_value: money(),
    possible: z.boolean(),
    gross_proceeds: decimal(),
    tax: decimal(),
    crypto_kept: decimal(),
    future_price: decimal(),
    end_value: decimal(),
  }),
  better_scenario: z.enum(['loan', 'sell', 'equal']).nullable().describe('null when neither is possible.'),
  opportunity_cost: money('USD between the two end values; null unless both are possible.').nullable(),
  break_even_growth: percentNumber('Annual growth at which both end equal.'),
  risk_level: z.enum(['low', 'medium', 'high', 'very_high']),
}));
const StakingResult = resource('StakingResult', z.object({
  final_balance: number('To 2 decimals.'),
  total_rewards: number('To 2 decimals.'),
  yearly_reward: number('To 2 decimals.'),
  monthly_reward: number('To 2 decimals.'),
  roi: percentNumber('total_rewards / amount.'),
  risk_level: z.enum(['low', 'medium', 'high', 'very_high']),
  net_apy: percentString('apy after commission.'),
  effective_annual_yield: percentString('One year of the net rate, compounded.'),
  commission_paid: decimal(),
  with_price_change: z.object({
    price_change: percentString('The price change given.'),
    final_value: decimal(),
    profit: decimal(),
    roi: percentString('profit / amount.').nullable(),
  }).nullable().describe('null without price_change.'),
}));

export const calculatorRoutes = [
  defineRoute({
    method: 'get', path: '/calculators/dca', cache: MARKET_CACHE, operationId: 'dCACalculator', tag, plan: 'free',
    query: z.object({
      slug,
      amount: decimalIn(0.01, 1_000_000_000).describe('USD spent at each buy (0.01-1,000,000,000).'),
      interval: frequencyName.describe('Buy every day, week (7 days), month, quarter or year (yearly = annually) from start.'),
      start: query.historyDate().describe('First buy (YYYY-MM-DD, after 2008-12-31).'),
      end: query.historyDate().optional().describe('Last possible buy date (YYYY-MM-DD), default today (UTC).'),
      series: booleanFlag.optional().default(false).describe('true: also return one row per buy with running totals.'),
    }).refine((q) => !q.end || q.end >= q.start, { path: ['end'], message: 'Must be on or after start.' }),
    response: envelope(DcaResult, z.object({
      coin: text(), interval: frequencyName, start: day(), end: day(), amount_per_buy: number(), currency,
    })),
    summary: "Dollar-cost averaging over real history: `amount` USD buys the coin at each interval's daily close from start to end (the last close before a day without a bar); "
      + 'summary {purchases, invested, accumulated, final_value, profit, roi} as JSON numbers (USD to the cent, accumulated to 10 decimals, roi in percent to 2), '
      + 'with the exact decimal strings total_invested, total_quantity, average_price, current_price, current_value.',
    handler: async ({ query: q, deps: { sql } }) => {
      const [row] = await sql<{ prices: CalculatorPrices }[]>`
        select api.dca_prices(${q.slug}, ${frequency(q.interval)}, ${q.start}::date, ${q.end ?? null}::date) as prices`;
      const { coin, current_price, closes } = row!.prices;
      const result = dca(q.amount, closes, current_price);
      return {
        data: { summary: result.summary, series: q.series ? result.series : null },
        // the echoed inputs are JSON numbers, as the reference types them
        meta: { coin: coin.slug, interval: q.interval, start: q.start, end: q.end ?? today(), amount_per_buy: Number(q.amount), currency: CURRENCY },
      };
    },
  }),
  defineRoute({
    method: 'get', path: '/calculators/profit-loss', cache: MARKET_CACHE, operationId: 'profitLossCalculator', tag, plan: 'free',
    query: z.object({
      slug,
      amount: decimalIn(0.01, 1_000_000_000).describe('USD spent on the buy, buy fee included (0.01-1,000,000,000).'),
      buy_date: query.historyDate().describe('YYYY-MM-DD: bought at that day\'s daily close.'),
      sell_date: query.historyDate().describe('YYYY-MM-DD, on or after buy_date: sold at that day\'s daily close.'),
      buy_fee: percentIn(100, {}).refine((value) => parsed(value)?.lt(100) ?? true, 'Must be below 100.').optional().default('0')
        .describe('Buy fee in percent of the amount (default 0).'),
      sell_fee: percentIn(100).optional().default('0').describe('Sell fee in percent of the sale value (default 0).'),
    }).refine((q) => q.sell_date >= q.buy_date, { path: ['sell_date'], message: 'Must be on or after buy_date.' }),
    response: envelope(ProfitLossResult, z.object({
      coin: text(), amount: number(), buy_date: day(), sell_date: day(), buy_fee: number(), sell_fee: number(), currency,
    })),
    summary: 'Profit or loss of buying for `amount` USD at the close of buy_date and selling at the close of sell_date, fees in percent: '
      + 'quantity = (amount - buy fee) / buy_price, investment_worth = quantity x sell_price - sell fee, profit = investment_worth - amount.',
    handler: async ({ query: q, deps: { sql } }) => {
      const [row] = await sql<{ prices: CalculatorPrices }[]>`
        select api.profit_loss_prices(${q.slug}, ${q.buy_date}::date, ${q.sell_date}::date) as prices`;
      const { coin, closes } = row!.prices;
      const [buy, sell] = closes;
      return {
        data: {
          ...profitLoss({ amount: q.amount, buyPrice: buy!.price, sellPrice: sell!.price, buyFeePercent: q.buy_fee, sellFeePercent: q.sell_fee }),
          buy_price_date: buy!.price_date,
          sell_price_date: sell!.price_date,
        },
        meta: {
          coin: coin.slug, amount: Number(q.amount), buy_date: q.buy_date, sell_date: q.sell_date, buy_fee: Number(q.buy_fee), sell_fee: Number(q.sell_fee), currency: CURRENCY,
        },
      };
    },
  }),
  defineRoute({
    method: 'get', path: '/calculators/compound-interest', cache: MARKET_CACHE, operationId: 'compoundInterestCalculator', tag, plan: 'free',
    query: z.object({
      principal: decimalIn(0, 1_000_000_000_000).describe('Starting balance (0-1,000,000,000,000).'),
      rate: percentIn(1000).describe('Nominal annual interest rate in percent (0-1000).'),
      duration: query.int(1, 1_000_000).describe('Length in duration_unit; at most the 50-year equivalent.'),
      duration_unit: z.enum(DURATION_UNIT_NAMES as [DurationUnit, ...DurationUnit[]]).optional().default('years')
        .describe('days, weeks, months or years (default years); a year is 365 days = 12 months.'),
      compound_frequency: frequencyName.optional().default('monthly').describe('How often interest is credited (default monthly).'),
      contribution: decimalIn(0, 1_000_000_000_000).optional().default('0').describe('Deposit at the end of each contribution interval (default 0).'),
      contribution_frequency: frequencyName.optional().default('monthly').describe('How often the contribution is deposited, independent of compounding (default monthly).'),
    }).superRefine((q, ctx) => {
      capDuration('duration', q.duration, q.duration_unit, ctx);
      if (parsed(q.principal)?.isZero() && parsed(q.contribution)?.isZero()) {
        ctx.addIssue({ code: 'custom', path: ['principal'], message: 'principal or contribution must be above 0.' });
      }
    }),
    response: envelope(CompoundInterestResult, noteMeta),
    summary: 'Compound interest with periodic contributions. rate is the nominal annual rate in percent: each compounding period earns rate / periods-per-year; '
      + 'a final partial period earns pro-rata simple interest; compounding and contribution frequencies are independent; every contribution inside the duration counts.',
    handler: async ({ query: q }) => ({
      data: compoundInterest({
        principal: q.principal, ratePercent: q.rate, compounding: frequency(q.compound_frequency), ticks: durationTicks(q.duration, q.duration_unit),
        contribution: q.contribution, contributionFrequency: frequency(q.contribution_frequency),
      }),
      meta: { note: RATE_NOTE },
    }),
  }),
  defineRoute({
    method: 'get', path: '/calculators/loan', cache: MARKET_CACHE, operationId: 'loanVsSellCalculator', tag, plan: 'free',
    query: z.object({
      slug,
      crypto_amount: decimalIn(0, 1e15, { above: true }).describe('Coins held, pledged as collateral or partly sold.'),
      needed_cash: decimalIn(0, 1e12, { above: true }).describe('USD needed.'),
      term_months: query.int(1, 600).optional().default(36).describe('Loan term in months (1-600, default 36).'),
      interest_rate: percentIn(1000).optional().default('10').describe('Nominal annual loan rate in percent: rate / 12 a month on the outstanding balance (default 10).'),
      ltv: percentIn(100, { above: true }).optional().default('50').describe('Maximum loan-to-value in percent (default 50).'),
      liquidation_ltv: percentIn(100, { above: true }).optional().default('80').describe('LTV in percent at which the collateral is liquidated (default 80, at least ltv).'),
      expected_growth: decimalIn(-100, 10_000, { signed: true }).optional().default('25').describe('Expected annual price change in percent (default 25).'),
      tax_rate: percentIn(100).refine((value) => parsed(value)?.lt(100) ?? true, 'Must be below 100.').optional().default('25')
        .describe('Capital gains tax in percent of the gain when selling (default 25).'),
      cost_basis: decimalIn(0, 1e15).optional().default('0').describe('USD paid per coin, for the taxable gain (default 0: the whole sale is gain).'),
    }).refine((q) => {
      const [liquidation, ltv] = [parsed(q.liquidation_ltv), parsed(q.ltv)];
      return !liquidation || !ltv || liquidation.gte(ltv);
    }, { path: ['liquidation_ltv'], message: 'Must be at least ltv.' }),
    response: envelope(LoanVsSellResult, z.object({ coin: text(), currency, note: text() })),
    summary: 'Borrow against the coins or sell some: an amortising loan (equal monthly instalments, liquidation price) against a sale (capital gains tax), '
      + 'both valued at the end of the term with the expected growth; better_scenario, opportunity_cost, break_even_growth, risk_level. '
      + 'Money is a JSON number: loan_scenario monthly_payment is the annuity rounded up to 0.1 (as the reference), total_payback = term_months x monthly_payment; '
      + 'total_interest, net_value, sell_scenario capital_gains_tax and net_value to the cent; '
      + 'crypto_sold to 10 decimals, break_even_growth in percent to 2; current_price and the remaining detail fields are exact decimal strings.',
    handler: async ({ query: q, deps: { sql } }) => {
      const [row] = await sql<{ prices: CalculatorPrices }[]>`select api.calculator_current_price(${q.slug}) as prices`;
      const { coin, current_price } = row!.prices;
      return {
        data: loanVsSell({
          price: current_price, cryptoAmount: q.crypto_amount, neededCash: q.needed_cash, termMonths: q.term_months,
          interestRatePercent: q.interest_rate, ltvPercent: q.ltv, liquidationLtvPercent: q.liquidation_ltv,
          expectedGrowthPercent: q.expected_growth, taxRatePercent: q.tax_rate, costBasis: q.cost_basis,
        }),
        meta: { coin: coin.slug, currency: CURRENCY, note: LOAN_NOTE },
      };
    },
  }),
  defineRoute({
    method: 'get', path: '/calculators/staking', cache: MARKET_CACHE, operationId: 'stakingRewardsCalculator', tag, plan: 'free',
    query: z.object({
      amount: decimalIn(0, 1e15, { above: true }).describe('The stake.'),
      period: decimalIn(0, 1_000_000, { above: true }).describe('How long it is staked, in period_unit; at most the 50-year equivalent.'),
      period_unit: z.enum(DURATION_UNIT_NAMES as [DurationUnit, ...DurationUnit[]]).optional().default('years').describe('days, weeks, months or years (default years).'),
      apy: percentIn(1000).describe('Annual reward rate in percent, nominal: each compounding period earns apy / periods-per-year (0-1000).'),
      compound_frequency: z.enum(['never', ...FREQUENCY_NAMES]).optional().default('monthly').describe('How often rewards are restaked; never: simple rewards (default monthly).'),
      commission: percentIn(100).optional().default('0').describe("The provider's share of every reward in percent (default 0)."),
      price_change: decimalIn(-100, 100_000, { signed: true }).optional().describe('Optional price change in percent over the period: values the final balance in with_price_change.'),
    }).superRefine((q, ctx) => capDuration('period', q.period, q.period_unit, ctx)),
    response: envelope(StakingResult, noteMeta),
    summary: 'Staking rewards: the stake grows at apy x (1 - commission / 100) with the compound-interest convention, or simply with compound_frequency=never; '
      + 'yearly_reward and monthly_reward are averages over the period.',
    handler: async ({ query: q }) => ({
      data: staking({
        amount: q.amount, apyPercent: q.apy, commissionPercent: q.commission, priceChangePercent: q.price_change ?? null,
        compounding: q.compound_frequency === 'never' ? 'never' : frequency(q.compound_frequency), ticks: durationTicks(q.period, q.period_unit),
      }),
      meta: { note: STAKING_NOTE },
    }),
  }),
];

interface CalculatorPrices {
  coin: { id: number; slug: string; symbol: string; name: string };
  current_price: string;
  last_updated: string | null;
  closes: { date: string; price: string; price_date: string }[];
}

const LOAN_NOTE = 'Loan: interest_rate is nominal annual, interest_rate / 12 a month on the outstanding balance, repaid in term_months equal instalments (an annuity); '
  + 'the instalment is rounded up to 0.1 so that they clear the debt. The liquidation price is for the initial debt, the highest. '
  + 'Sell: tax_rate applies to the gain over cost_basis. Both end values use the current price grown by expected_growth a year. Prices in USD.';
const STAKING_NOTE = `${RATE_NOTE} The provider keeps commission percent of each reward.`;
