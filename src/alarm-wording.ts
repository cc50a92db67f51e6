// An alarm in words, shared by the channels that tell a person about it (e-mail: src/mail/templates.ts,
// push: src/push/send.ts) from the event the outbox recorded. Kept apart from the alarm operations
// (src/alarms.ts) so a sender loads no schema, SQL or HTTP code.

/** data of an alarm.triggered e-mail or push: app.alarm_triggered_event (sql/functions/625_alarm_evaluation.sql) */
export interface AlarmTriggeredData {
  alarm: { id: number; name: string } | null;
  coin: { slug: string; name: string; symbol: string };
  metric: 'rate' | 'volume' | 'marketcap';
  direction: 'above' | 'below';
  target: string;
  value: string;
  triggered_at: string;
}

export const METRIC_WORDS: Record<AlarmTriggeredData['metric'], string> = { rate: 'price (USD)', volume: '24h volume (USD)', marketcap: 'market cap (USD)' };
export const DIRECTION_WORDS: Record<AlarmTriggeredData['direction'], string> = { above: 'at or above', below: 'at or below' };

/** What an alarm watches, in words: `Alpha (ALP) price (USD) at or above 150.10` (e-mail subjects, push notifications). */
export const alarmHeadline = (data: Pick<AlarmTriggeredData, 'coin' | 'metric' | 'direction' | 'target'>) =>
  `${data.coin.name} (${data.coin.symbol}) ${METRIC_WORDS[data.metric]} ${DIRECTION_WORDS[data.direction]} ${data.target}`;
