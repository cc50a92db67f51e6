// Dollar-cost averaging over real history.
//
// The buy dates are start, start + 1 interval, start + 2 intervals ... up to end inclusive
// (months added to the start date, clamped to the month's last day: Jan 31, Feb 29, Mar 31);
// SQL (api.dca_prices) makes them and prices each at that UTC day's daily close, or the last
// close before it when the day has no bar. Each buy spends `amount` and gets amount / close coins.
//   total_invested = purchases x amount          total_quantity = sum of amount / close
//   average_price  = total_invested / total_quantity
//   current_value  = total_quantity x current price (market.coin_state)
//   profit = current_value - total_invested      roi = profit / total_invested x 100 (percent)
// The reference's summary fields are JSON numbers rounded once at the output: invested, final_value,
// profit (to the cent), accumulated (10 decimals), roi (2 decimals); the other summary fields keep
// the exact decimal strings (total_invested, total_quantity, current_value: the same values unrounded).
// The series has one row per buy: what was bought and the running totals, valued at that day's close.
import { Dec, type DecimalInput, amount as decimal, money, percentOfNumber, quantity as coins } from './periods.ts';

export interface Buy {
  date: string;
  price: string;
  /** the day whose close `price` is, when not `date` itself (a gap in the history) */
  price_date?: string;
}

export function dca(amountPerBuy: DecimalInput, buys: Buy[], currentPrice: DecimalInput) {
  const spend = new Dec(amountPerBuy);
  let invested = new Dec(0);
  let quantity = new Dec(0);
  const series = buys.map((buy) => {
    const price = new Dec(buy.price);
    const bought = spend.div(price);
    invested = invested.plus(spend);
    quantity = quantity.plus(bought);
    const value = quantity.mul(price);
    return {
      date: buy.date,
      price: decimal(price),
      price_date: buy.price_date ?? buy.date,
      quantity: decimal(bought),
      total_invested: decimal(invested),
      total_quantity: decimal(quantity),
      value: decimal(value),
      profit: decimal(value.minus(invested)),
    };
  });
  const currentValue = quantity.mul(currentPrice);
  const profit = currentValue.minus(invested);
  return {
    summary: {
      invested: money(invested),
      accumulated: coins(quantity),
      final_value: money(currentValue),
      profit: money(profit),
      roi: percentOfNumber(profit, invested),
      total_invested: decimal(invested),
      total_quantity: decimal(quantity),
      average_price: quantity.isZero() ? null : decimal(invested.div(quantity)),
      current_price: decimal(new Dec(currentPrice)),
      current_value: decimal(currentValue),
      purchases: buys.length,
    },
    series,
  };
}
