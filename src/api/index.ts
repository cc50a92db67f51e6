// Every API group's routes, in the order they are documented.
import type { RouteSpec } from '../http/routes.ts';
import { coinRoutes } from './coins.ts';
import { exchangeRoutes, marketRoutes } from './exchanges.ts';
import { indicatorRoutes } from './indicators.ts';
import { conversionRoutes } from './conversion.ts';
import { liquidationRoutes } from './liquidations.ts';
import { metaRoutes } from './meta.ts';
import { priceRoutes } from './prices.ts';
import { globalRoutes } from './global.ts';
import { sentimentRoutes } from './sentiment.ts';

export const apiRoutes: RouteSpec[] = [...coinRoutes, ...priceRoutes, ...marketRoutes, ...exchangeRoutes, ...indicatorRoutes, ...globalRoutes, ...sentimentRoutes, ...liquidationRoutes, ...conversionRoutes, ...metaRoutes];
