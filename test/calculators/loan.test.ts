// The loan calculator's amortisation: the reference's example, rate 0, and the schedule's invariants.
import test from 'ava';
import { loanVsSell } from '../../src/calculators/loan.ts';
import { Dec } from '../../src/calculators/periods.ts';

// the reference's example: 2 coins at 109731.2, 50000 borrowed at 10 % for 36 months
const REFERENCE = {
  price: '109731.2', cryptoAmount: '2', neededCash: '50000', termMonths: 36, interestRatePercent: '10', ltvPercent: '50',
  liquidationLtvPercent: '80', expectedGrowthPercent: '25', taxRatePercent: '25',
};

test("loan: the reference's example, an annuity at 10/12 % a month", (t) => {
  const result = loanVsSell(REFERENCE);
  t.like(result, { collateral_value: 219462.4, max_loan: 109731.2, loan_possible: true });
  t.like(result.loan_scenario, { monthly_payment: 1613.4, total_payback: 58082.4, total_interest: 8082.4, total_repayment: '58082.4' });
  t.regex(result.loan_scenario.monthly_payment_exact, /^1613\.3593596918/); // 50000 r / (1 - (1 + r)^-36), r = 1/120
  // the end value counts the 36 instalments: 2 coins at the grown price, minus 58082.4
  t.is(result.loan_scenario.end_value, new Dec(result.loan_scenario.future_price).mul(2).minus('58082.4').toSignificantDigits(15).toFixed());
});

test('loan: at rate 0 the instalment is the principal spread evenly, no interest', (t) => {
  const result = loanVsSell({ ...REFERENCE, neededCash: '36000', interestRatePercent: '0' });
  t.like(result.loan_scenario, {
    monthly_payment: 1000, total_payback: 36000, total_interest: 0, monthly_payment_exact: '1000',
    // the final month owes the last 1000: liquidated when 80 % of 2 coins is worth less, at 625
    liquidation_price_at_maturity: '625', liquidation_price: '22500',
  });
  // 50000 / 36 = 1388.88..., charged 1388.9: the rounding up is the only cost, 36 x 0.0111... = 0.4
  t.like(loanVsSell({ ...REFERENCE, interestRatePercent: '0' }).loan_scenario, { monthly_payment: 1388.9, total_payback: 50000.4, total_interest: 0.4 });
});

test('loan: the instalments clear the debt, the liquidation price falls, break-even equalises the end values', (t) => {
  for (const rate of ['0', '0.5', '7.25', '10', '36', '1000']) {
    for (const termMonths of [1, 2, 12, 36, 360, 600]) {
      for (const cash of ['0.37', '1000', '50000', '123456.789']) {
        const input = { ...REFERENCE, neededCash: cash, interestRatePercent: rate, termMonths };
        const { loan_scenario: loan, break_even_growth } = loanVsSell(input);
        const label = `${cash} at ${rate} % for ${termMonths} months`;
        const r = new Dec(rate).div(1200);
        // the annuity, exact, (printed to 15 digits) amortises to nothing; the instalment charged is it rounded up to 0.1
        const exact = r.isZero() ? new Dec(cash).div(termMonths) : new Dec(cash).mul(r).div(new Dec(1).minus(r.plus(1).pow(-termMonths)));
        t.is(loan.monthly_payment_exact, exact.toSignificantDigits(15).toFixed(), label);
        let balance = new Dec(cash);
        let beforeLast = balance;
        for (let month = 0; month < termMonths; month += 1) {
          beforeLast = balance;
          balance = balance.mul(r.plus(1)).minus(exact);
        }
        // within the 50-digit working precision, which the balance's growth (1 + r)^n amplifies
        const tolerance = new Dec('1e-40').mul(r.plus(1).pow(termMonths)).plus('1e-30');
        t.true(balance.abs().lt(tolerance), label);
        t.true(beforeLast.mul(r.plus(1)).minus(exact).abs().lt(tolerance), label); // the final month owes M / (1 + r)
        const charged = new Dec(loan.monthly_payment);
        t.true(charged.gte(exact) && charged.minus(exact).lt('0.1'), label);
        t.true(charged.mul(10).isInteger(), label);
        t.is(loan.total_repayment, charged.mul(termMonths).toFixed(), label);
        t.true(loan.total_interest >= 0, label);
        t.true(new Dec(loan.liquidation_price_at_maturity).lte(loan.liquidation_price), label);
        // at break_even_growth (to 2 places) the two end values differ by no more than that rounding moves them
        const even = loanVsSell({ ...input, expectedGrowthPercent: String(break_even_growth) });
        const gap = new Dec(even.loan_scenario.end_value).minus(even.sell_scenario.end_value).abs();
        const step = loanVsSell({ ...input, expectedGrowthPercent: new Dec(break_even_growth).plus('0.01').toFixed() });
        t.true(gap.lte(new Dec(step.loan_scenario.end_value).minus(step.sell_scenario.end_value).abs().plus('1e-9')), label);
      }
    }
  }
});
