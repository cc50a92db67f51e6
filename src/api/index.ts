// Every API group's routes, in the order they are documented.
import type { RouteSpec } from '../http/routes.ts';
import { alarmRoutes } from './alarms.ts';
import { calculatorRoutes } from './calculators.ts';
import { coinRoutes } from './coins.ts';
import { editorialRoutes } from './editorial.ts';
import { exchangeRoutes, marketRoutes } from './exchanges.ts';
import { indicatorRoutes } from './indicators.ts';
import { conversionRoutes } from './conversion.ts';
import { liquidationRoutes } from './liquidations.ts';
import { metaRoutes } from './meta.ts';
import { priceRoutes } from './prices.ts';
import { globalRoutes } from './global.ts';
import { sentimentRoutes } from './sentiment.ts';
import { streamRoutes } from './stream.ts';
import { walletRoutes } from './wallets.ts';
import { webhookRoutes } from './webhooks.ts';

export const apiRoutes: RouteSpec[] = [...coinRoutes, ...priceRoutes, ...streamRoutes, ...marketRoutes, ...exchangeRoutes, ...walletRoutes, ...indicatorRoutes, ...globalRoutes, ...sentimentRoutes, ...liquidationRoutes, ...conversionRoutes, ...calculatorRoutes, ...editorialRoutes, ...alarmRoutes, ...webhookRoutes, ...metaRoutes];
