// Loan vs sell: raise `needed_cash` by borrowing against the coins, or by selling some of them.
//
// P = current price, Q = crypto_amount, L = needed_cash, n = term_months.
//   collateral_value = Q x P, max_loan = collateral_value x ltv / 100, loan_possible = L <= max_loan
//   Loan: interest accrues at interest_rate (nominal annual, compounded monthly: rate/12 a month,
//     the compound-interest convention) and is repaid with the principal at the end of the term:
//     repayment R = L (1 + rate/1200)^n. The loan's LTV is L / (Q x P).
//     liquidation_price = L / (Q x liquidation_ltv / 100): the price at which the debt reaches
//     liquidation_ltv of the collateral; at maturity the debt is R, hence
//     liquidation_price_at_maturity = R / (Q x liquidation_ltv / 100).
//   Sell: capital gains tax is tax_rate of the gain, the gain per coin being P - cost_basis
//     (cost_basis 0 by default: the whole proceeds are gain, the cautious case). To net L, sell
//     gross G = L / (1 - tax_rate/100 x max(0, 1 - cost_basis/P)), i.e. G / P coins; tax = G - L.
//   The price is expected to grow expected_growth percent a year: F = P (1 + g/100)^(n/12).
//   End value (what you hold at the end of the term, the cash being spent either way):
//     loan: Q x F - R; sell: (Q - G/P) x F.
//   better_scenario: the possible scenario with the larger end value ('equal' on a tie, null when
//     neither is possible); opportunity_cost: how much the other scenario's end value falls short.
//   break_even_growth: the annual growth at which both end equal, i.e. the coins sold would be
//     worth exactly the repayment: (G/P) x F = R, so g = (R / G)^(12/n) - 1 (percent).
//   risk_level: from the price drop that triggers liquidation, 1 - loan LTV / liquidation_ltv:
//     at least 50 % low, 30 % medium, 15 % high, less very_high.
// Output: the reference's fields are JSON numbers rounded once (money to the cent, crypto_sold to 10
// decimals, break_even_growth to 2): collateral_value, max_loan, loan_scenario.{monthly_payment,
// total_payback, total_interest, net_value}, sell_scenario.{crypto_sold, capital_gains_tax, net_value},
// opportunity_cost. monthly_payment = R / n, the repayment spread evenly over the term (this model
// repays at maturity). The other fields keep exact decimal strings (total_repayment = total_payback,
// end_value = net_value, tax = capital_gains_tax, unrounded).
import { grow } from './compound-interest.ts';
import { Dec, type DecimalInput, FREQUENCIES, amount as decimal, money, percent, percentNumber, quantity } from './periods.ts';

export interface LoanInput {
  price: DecimalInput;
  cryptoAmount: DecimalInput;
  neededCash: DecimalInput;
  termMonths: number;
  interestRatePercent: DecimalInput;
  ltvPercent: DecimalInput;
  expectedGrowthPercent: DecimalInput;
  taxRatePercent: DecimalInput;
  liquidationLtvPercent: DecimalInput;
  costBasis?: DecimalInput;
}

export function loanRisk(dropToLiquidation: Dec) {
  if (dropToLiquidation.gte(0.5)) return 'low';
  if (dropToLiquidation.gte(0.3)) return 'medium';
  if (dropToLiquidation.gte(0.15)) return 'high';
  return 'very_high';
}

export function loanVsSell(input: LoanInput) {
  const price = new Dec(input.price);
  const coins = new Dec(input.cryptoAmount);
  const cash = new Dec(input.neededCash);
  const liquidationShare = new Dec(input.liquidationLtvPercent).div(100);
  const collateral = coins.mul(price);
  const maxLoan = collateral.mul(input.ltvPercent).div(100);
  const loanPossible = cash.lte(maxLoan);
  const loanLtv = cash.div(collateral);

  const repayment = grow({
    principal: cash, ratePercent: input.interestRatePercent, compounding: 'monthly', ticks: input.termMonths * FREQUENCIES.monthly.ticks,
  }).finalBalance;
  const years = new Dec(input.termMonths).div(12);
  const futurePrice = price.mul(new Dec(input.expectedGrowthPercent).plus(100).div(100).pow(years));
  const loanEnd = coins.mul(futurePrice).minus(repayment);

  const gainShare = Dec.max(0, new Dec(1).minus(new Dec(input.costBasis ?? 0).div(price)));
  const gross = cash.div(new Dec(1).minus(new Dec(input.taxRatePercent).div(100).mul(gainShare)));
  const sold = gross.div(price);
  const kept = coins.minus(sold);
  const sellPossible = kept.gte(0);
  const sellEnd = kept.mul(futurePrice);

  const candidates = [loanPossible && { name: 'loan', end: loanEnd }, sellPossible && { name: 'sell', end: sellEnd }].filter(
    (candidate): candidate is { name: string; end: Dec } => Boolean(candidate),
  );
  let better: string | null = null;
  let opportunityCost: Dec | null = null;
  if (candidates.length === 1) better = candidates[0]!.name;
  if (candidates.length === 2) {
    const difference = loanEnd.minus(sellEnd);
    better = difference.isZero() ? 'equal' : difference.isPos() ? 'loan' : 'sell';
    opportunityCost = difference.abs();
  }
  return {
    current_price: decimal(price),
    collateral_value: money(collateral),
    max_loan: money(maxLoan),
    loan_possible: loanPossible,
    loan_scenario: {
      monthly_payment: money(repayment.div(input.termMonths)),
      total_payback: money(repayment),
      total_interest: money(repayment.minus(cash)),
      net_value: money(loanEnd),
      loan_amount: decimal(cash),
      ltv: percent(loanLtv.mul(100)),
      term_months: input.termMonths,
      total_repayment: decimal(repayment),
      liquidation_ltv: percent(liquidationShare.mul(100)),
      liquidation_price: decimal(cash.div(coins.mul(liquidationShare))),
      liquidation_price_at_maturity: decimal(repayment.div(coins.mul(liquidationShare))),
      crypto_kept: decimal(coins),
      future_price: decimal(futurePrice),
      end_value: decimal(loanEnd),
    },
    sell_scenario: {
      crypto_sold: quantity(sold),
      capital_gains_tax: money(gross.minus(cash)),
      net_value: money(sellEnd),
      possible: sellPossible,
      gross_proceeds: decimal(gross),
      tax: decimal(gross.minus(cash)),
      crypto_kept: decimal(kept),
      future_price: decimal(futurePrice),
      end_value: decimal(sellEnd),
    },
    better_scenario: better,
    opportunity_cost: opportunityCost && money(opportunityCost),
    break_even_growth: percentNumber(repayment.div(gross).pow(new Dec(12).div(input.termMonths)).minus(1).mul(100)),
    risk_level: loanRisk(new Dec(1).minus(loanLtv.div(liquidationShare))),
  };
}
