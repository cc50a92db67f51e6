// Staking rewards: compound interest on a stake, net of the provider's commission.
//
// - `apy` is the advertised annual reward rate in percent, read with the compound-interest
//   convention (nominal: each compounding period earns rate / periods-per-year). The provider
//   keeps `commission` percent of every reward, so the stake grows at apy x (1 - commission/100).
// - compounding `never`: rewards are paid out, not restaked: simple rewards on the stake.
// - yearly_reward and monthly_reward are the averages over the period (total / years, / months).
// - `price_change` (optional, percent over the period, >= -100) revalues the final balance:
//   with_price_change = {final_value = final_balance x (1 + price_change/100), profit against the
//   stake, roi}.
// - risk_level is a heuristic on the net rate: below 5 % low, below 15 % medium, below 40 % high,
//   else very_high (yields far above the market's usually pay for a risk).
import { grow } from './compound-interest.ts';
import { Dec, type DecimalInput, TICKS_PER_YEAR, amount, money, percent, percentOf, percentOfNumber, type Frequency } from './periods.ts';

export interface StakingInput {
  amount: DecimalInput;
  apyPercent: DecimalInput;
  compounding: Frequency | 'never';
  /** the period in ticks (periods.ts) */
  ticks: DecimalInput;
  commissionPercent?: DecimalInput;
  priceChangePercent?: DecimalInput | null;
}

export function riskLevel(netRatePercent: Dec) {
  if (netRatePercent.lt(5)) return 'low';
  if (netRatePercent.lt(15)) return 'medium';
  if (netRatePercent.lt(40)) return 'high';
  return 'very_high';
}

export function staking(input: StakingInput) {
  const stake = new Dec(input.amount);
  const commission = new Dec(input.commissionPercent ?? 0);
  const netRate = new Dec(input.apyPercent).mul(new Dec(100).minus(commission)).div(100);
  const ticks = new Dec(input.ticks);
  const net = grow({ principal: stake, ratePercent: netRate, compounding: input.compounding, ticks });
  const gross = grow({ principal: stake, ratePercent: input.apyPercent, compounding: input.compounding, ticks });
  // what one unit staked for one year turns into, minus one: the rate as an effective yield
  const oneYear = grow({ principal: 1, ratePercent: netRate, compounding: input.compounding, ticks: TICKS_PER_YEAR });
  const years = ticks.div(TICKS_PER_YEAR);
  const rewards = net.totalInterest;
  const priceChange = input.priceChangePercent == null ? null : new Dec(input.priceChangePercent);
  const finalValue = priceChange && net.finalBalance.mul(priceChange.plus(100)).div(100);
  return {
    // the reference's fields as JSON numbers rounded once (money to the cent, roi to 2 decimals)
    final_balance: money(net.finalBalance),
    total_rewards: money(rewards),
    yearly_reward: years.isZero() ? 0 : money(rewards.div(years)),
    monthly_reward: years.isZero() ? 0 : money(rewards.div(years.mul(12))),
    roi: percentOfNumber(rewards, stake),
    risk_level: riskLevel(netRate),
    net_apy: percent(netRate),
    effective_annual_yield: percent(oneYear.totalInterest.mul(100)),
    commission_paid: amount(gross.totalInterest.minus(rewards)),
    with_price_change: priceChange && finalValue
      ? { price_change: percent(priceChange), final_value: amount(finalValue), profit: amount(finalValue.minus(stake)), roi: percentOf(finalValue.minus(stake), stake) }
      : null,
  };
}
