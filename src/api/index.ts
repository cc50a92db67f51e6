// Every API group's routes, in the order they are documented.
import type { RouteSpec } from '../http/routes.ts';
import { coinRoutes } from './coins.ts';
import { indicatorRoutes } from './indicators.ts';
import { metaRoutes } from './meta.ts';
import { priceRoutes } from './prices.ts';

export const apiRoutes: RouteSpec[] = [...coinRoutes, ...priceRoutes, ...indicatorRoutes, ...metaRoutes];
