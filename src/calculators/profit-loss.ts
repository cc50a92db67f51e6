// Profit or loss of one buy and one sell at the daily closes of two dates, with fees.
//
// Fees are percentages of the traded value (as exchanges quote them, e.g. 0.1):
//   buy fee    = amount x buy_fee / 100, taken from `amount` (the total spent, fee included)
//   quantity   = (amount - buy fee) / buy_price
//   sell fee   = quantity x sell_price x sell_fee / 100
//   investment_worth = quantity x sell_price - sell fee      (what the sale pays out)
//   total_fees = buy fee + sell fee
//   profit = investment_worth - amount                        roi = profit / amount x 100
// Output: the reference's fields quantity (10 decimals), investment_worth, total_fees, profit (to the
// cent) and roi (percent, 2 decimals) are JSON numbers rounded once; the prices and today's extra
// fields (buy_fee_amount, sell_fee_amount) stay exact decimal strings.
import { Dec, type DecimalInput, amount as decimal, money, percentOfNumber, quantity as coins } from './periods.ts';

export interface ProfitLossInput {
  amount: DecimalInput;
  buyPrice: DecimalInput;
  sellPrice: DecimalInput;
  buyFeePercent?: DecimalInput;
  sellFeePercent?: DecimalInput;
}

export function profitLoss(input: ProfitLossInput) {
  const spent = new Dec(input.amount);
  const buyPrice = new Dec(input.buyPrice);
  const sellPrice = new Dec(input.sellPrice);
  const buyFee = spent.mul(input.buyFeePercent ?? 0).div(100);
  const quantity = spent.minus(buyFee).div(buyPrice);
  const gross = quantity.mul(sellPrice);
  const sellFee = gross.mul(input.sellFeePercent ?? 0).div(100);
  const worth = gross.minus(sellFee);
  const profit = worth.minus(spent);
  return {
    buy_price: decimal(buyPrice),
    sell_price: decimal(sellPrice),
    quantity: coins(quantity),
    investment_worth: money(worth),
    total_fees: money(buyFee.plus(sellFee)),
    buy_fee_amount: decimal(buyFee),
    sell_fee_amount: decimal(sellFee),
    profit: money(profit),
    roi: percentOfNumber(profit, spent),
  };
}
