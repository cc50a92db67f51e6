// Loan vs sell: raise `needed_cash` by borrowing against the coins, or by selling some of them.
//
// P = current price, Q = crypto_amount, L = needed_cash, n = term_months, r = interest_rate / 1200.
//   collateral_value = Q x P, max_loan = collateral_value x ltv / 100, loan_possible = L <= max_loan
//   Loan: an amortising annuity (the reference's model): interest_rate is nominal annual, r a month on the
//     outstanding balance, repaid in n equal monthly instalments of
//     M = L r / (1 - (1 + r)^-n)   (r = 0: M = L / n), exact in decimal (monthly_payment_exact).
//     The instalment charged, monthly_payment, is M rounded UP to the reference's precision, 0.1 (its
//     example: 1613.359... -> 1613.4), the one rounding: rounding up makes the n instalments clear the
//     debt. total_payback T = n x monthly_payment (what is paid, the reference's 58082.4 = 36 x 1613.4),
//     total_interest = T - L (so it includes the instalment's rounding, under 0.1 a month).
//     The loan's LTV is L / (Q x P). The debt falls with every instalment; the collateral stays:
//     liquidation_price = L / (Q x liquidation_ltv / 100), at the start, the highest debt, hence the
//     threshold for the whole term; liquidation_price_at_maturity uses the final month's debt, the
//     balance before the last instalment, B(n-1) = M / (1 + r): B(n-1) / (Q x liquidation_ltv / 100).
//   Sell: capital gains tax is tax_rate of the gain, the gain per coin being P - cost_basis
//     (cost_basis 0 by default: the whole proceeds are gain, the cautious case). To net L, sell
//     gross G = L / (1 - tax_rate/100 x max(0, 1 - cost_basis/P)), i.e. G / P coins; tax = G - L.
//   The price is expected to grow expected_growth percent a year: F = P (1 + g/100)^(n/12).
//   End value (what you hold at the end of the term, the cash being spent either way; the instalments
//     are counted at face value, not discounted): loan: Q x F - T; sell: (Q - G/P) x F.
//   better_scenario: the possible scenario with the larger end value ('equal' on a tie, null when
//     neither is possible); opportunity_cost: how much the other scenario's end value falls short.
//   break_even_growth: the annual growth at which both end equal, i.e. the coins sold would be
//     worth exactly what the loan costs in total: (G/P) x F = T, so g = (T / G)^(12/n) - 1 (percent).
//   risk_level: from the price drop that triggers liquidation at the start (the highest debt),
//     1 - loan LTV / liquidation_ltv: at least 50 % low, 30 % medium, 15 % high, less very_high.
// Output: the reference's fields are JSON numbers rounded once (monthly_payment up to 0.1 as above,
// other money to the cent, crypto_sold to 10 decimals, break_even_growth to 2): collateral_value,
// max_loan, loan_scenario.{monthly_payment, total_payback, total_interest, net_value},
// sell_scenario.{crypto_sold, capital_gains_tax, net_value}, opportunity_cost. The other fields keep
// exact decimal strings (total_repayment = total_payback, end_value = net_value,
// tax = capital_gains_tax, monthly_payment_exact = M, unrounded).
import { Dec, type DecimalInput, amount as decimal, money, percent, percentNumber, quantity } from './periods.ts';

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

  const n = input.termMonths;
  const monthlyRate = new Dec(input.interestRatePercent).div(1200);
  const annuity = monthlyRate.isZero() ? cash.div(n) : cash.mul(monthlyRate).div(new Dec(1).minus(monthlyRate.plus(1).pow(-n)));
  const instalment = annuity.toDecimalPlaces(1, Dec.ROUND_UP);
  const repayment = instalment.mul(n);
  const finalMonthDebt = annuity.div(monthlyRate.plus(1));
  const years = new Dec(n).div(12);
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
      monthly_payment: instalment.toNumber(),
      total_payback: money(repayment),
      total_interest: money(repayment.minus(cash)),
      net_value: money(loanEnd),
      loan_amount: decimal(cash),
      ltv: percent(loanLtv.mul(100)),
      term_months: input.termMonths,
      total_repayment: decimal(repayment),
      monthly_payment_exact: decimal(annuity),
      liquidation_ltv: percent(liquidationShare.mul(100)),
      liquidation_price: decimal(cash.div(coins.mul(liquidationShare))),
      liquidation_price_at_maturity: decimal(finalMonthDebt.div(coins.mul(liquidationShare))),
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
    break_even_growth: percentNumber(repayment.div(gross).pow(new Dec(12).div(n)).minus(1).mul(100)),
    risk_level: loanRisk(new Dec(1).minus(loanLtv.div(liquidationShare))),
  };
}
