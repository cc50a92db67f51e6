// DCA, profit/loss, loan vs sell and staking as pure functions, on hand-computed cases.
import test from 'ava';
import { dca } from '../../src/calculators/dca.ts';
import { loanVsSell } from '../../src/calculators/loan.ts';
import { Dec, amount, durationTicks, money } from '../../src/calculators/periods.ts';
import { profitLoss } from '../../src/calculators/profit-loss.ts';
import { staking } from '../../src/calculators/staking.ts';

test('dca: three buys of 100 at 10, 20 and 25 are 10 + 5 + 4 = 19 coins for 300', (t) => {
  const result = dca('100', [
    { date: '2024-01-31', price: '10' }, { date: '2024-02-29', price: '20', price_date: '2024-02-28' }, { date: '2024-03-31', price: '25' },
  ], '30');
  t.deepEqual(result.summary, {
    invested: 300, accumulated: 19, final_value: 570, profit: 270, roi: 90,
    total_invested: '300', total_quantity: '19', average_price: '15.7894736842105', // 300 / 19
    current_price: '30', current_value: '570', purchases: 3,
  });
  t.deepEqual(result.series[1], {
    date: '2024-02-29', price: '20', price_date: '2024-02-28', quantity: '5', total_invested: '200', total_quantity: '15', value: '300', profit: '100',
  });
});

test('dca: quantities keep their precision until the output (100 at 3 three times is exactly 100 coins)', (t) => {
  const result = dca('100', [{ date: '2024-01-01', price: '3' }, { date: '2024-01-02', price: '3' }, { date: '2024-01-03', price: '3' }], '3');
  t.like(result.summary, { total_quantity: '100', accumulated: 100, average_price: '3', profit: 0, roi: 0 });
  // rounded once at the output: 100 at 7 is 14.2857142857 coins, 10 decimals; worth 100.00 at 7, not 99.99...
  t.like(dca('100', [{ date: '2024-01-01', price: '7' }], '7').summary, { accumulated: 14.2857142857, final_value: 100, profit: 0 });
  t.is(result.series[0]!.quantity, '33.3333333333333');
});

test('profit/loss: percent fees on both sides (hand-computed)', (t) => {
  // 1000 with a 1 % buy fee: 10 fee, 990 / 50 = 19.8 coins; sold at 80: 1584, 0.5 % sell fee 7.92;
  // worth 1576.08, profit 576.08, roi 57.608 % (57.61 to 2 decimals); the reference's fields are numbers
  t.deepEqual(profitLoss({ amount: '1000', buyPrice: '50', sellPrice: '80', buyFeePercent: '1', sellFeePercent: '0.5' }), {
    buy_price: '50', sell_price: '80', quantity: 19.8, investment_worth: 1576.08, total_fees: 17.92,
    buy_fee_amount: '10', sell_fee_amount: '7.92', profit: 576.08, roi: 57.61,
  });
  t.like(profitLoss({ amount: '100', buyPrice: '4', sellPrice: '2' }), { quantity: 25, investment_worth: 50, total_fees: 0, profit: -50, roi: -50 });
  // half away from zero, once: 1 at 8 is 0.125 coins, sold at 7 for 0.875 (0.88): a loss of 0.125 is -0.13
  t.like(profitLoss({ amount: '1', buyPrice: '8', sellPrice: '7' }), { quantity: 0.125, investment_worth: 0.88, profit: -0.13, roi: -12.5 });
});

test('loan vs sell: hand-computed scenarios, liquidation price and break-even growth', (t) => {
  const input = {
    price: '100', cryptoAmount: '10', neededCash: '200', termMonths: 12, interestRatePercent: '12', ltvPercent: '50',
    liquidationLtvPercent: '80', expectedGrowthPercent: '10', taxRatePercent: '25',
  };
  const result = loanVsSell(input);
  // 1 % a month for 12 months, amortised: M = 200 x 0.01 / (1 - 1.01^-12) = 17.7697..., charged 17.8 (up to 0.1)
  const annuity = new Dec(2).div(new Dec(1).minus(new Dec('1.01').pow(-12)));
  const repayment = new Dec('17.8').mul(12); // 213.6 paid over the term
  const loanEnd = new Dec(10).mul(110).minus(repayment); // 10 coins at 110, minus the instalments
  const sellEnd = new Dec(10).minus(new Dec(200).div('0.75').div(100)).mul(110); // 266.67 gross = 2.6667 coins sold
  t.like(result, {
    current_price: '100', collateral_value: 1000, max_loan: 500, loan_possible: true, better_scenario: 'loan',
    opportunity_cost: money(loanEnd.minus(sellEnd)), risk_level: 'low', // 20 % LTV: a 75 % drop to liquidation
    break_even_growth: Number(repayment.div(new Dec(200).div('0.75')).minus(1).mul(100).toDecimalPlaces(2, Dec.ROUND_HALF_UP).toFixed()),
  });
  t.like(result.loan_scenario, {
    monthly_payment: 17.8, total_payback: money(repayment), net_value: money(loanEnd),
    loan_amount: '200', ltv: '20', total_repayment: amount(repayment), total_interest: money(repayment.minus(200)),
    monthly_payment_exact: amount(annuity),
    // the final month owes M / 1.01 before its instalment: 80 % of 10 coins covers it down to that / 8
    liquidation_price: '25', liquidation_price_at_maturity: amount(annuity.div('1.01').div(8)), future_price: '110', end_value: amount(loanEnd),
  });
  t.like(result.loan_scenario, { total_payback: 213.6, total_interest: 13.6 }); // 12 x 17.8
  t.like(result.sell_scenario, { possible: true, crypto_sold: 2.6666666667, capital_gains_tax: 66.67, net_value: money(sellEnd), gross_proceeds: '266.666666666667', tax: '66.6666666666667', end_value: amount(sellEnd) });
  // bought at 50: half of each sale is gain, so 200 / (1 - 0.125) is sold
  t.like(loanVsSell({ ...input, costBasis: '50' }).sell_scenario, { gross_proceeds: '228.571428571429', tax: '28.5714285714286' });
  // more cash than the LTV allows: only selling is possible
  t.like(loanVsSell({ ...input, neededCash: '600' }), { loan_possible: false, better_scenario: 'sell', opportunity_cost: null });
  // a price drop: selling wins
  t.like(loanVsSell({ ...input, expectedGrowthPercent: '-50' }), { better_scenario: 'sell' });
});

test('staking: commission lowers the rate, never compounds nothing, price change revalues the end', (t) => {
  // 1000 at 10 % less a 10 % commission = 9 % compounded annually for 2 years: 1188.1
  const result = staking({ amount: '1000', apyPercent: '10', commissionPercent: '10', compounding: 'annually', ticks: durationTicks(2, 'years'), priceChangePercent: '-50' });
  t.like(result, {
    final_balance: 1188.1, total_rewards: 188.1, yearly_reward: 94.05, monthly_reward: 7.84, roi: 18.81, // 7.8375 to the cent
    net_apy: '9', effective_annual_yield: '9', risk_level: 'medium', commission_paid: '21.9', // 1210 at the full 10 %
  });
  t.deepEqual(result.with_price_change, { price_change: '-50', final_value: '594.05', profit: '-405.95', roi: '-40.595' });
  const simple = staking({ amount: '1000', apyPercent: '12', compounding: 'never', ticks: durationTicks(6, 'months') });
  t.like(simple, { final_balance: 1060, total_rewards: 60, with_price_change: null, risk_level: 'medium' });
  const monthly = staking({ amount: '1000', apyPercent: '12', compounding: 'monthly', ticks: durationTicks(1, 'years') });
  t.is(monthly.final_balance, money(new Dec(1000).mul(new Dec('1.01').pow(12))));
  t.is(monthly.effective_annual_yield, new Dec('1.01').pow(12).minus(1).mul(100).toDecimalPlaces(4).toFixed());
});
