// Every API group's routes, in the order they are documented.
import type { RouteSpec } from '../http/routes.ts';
import { metaRoutes } from './meta.ts';

export const apiRoutes: RouteSpec[] = [...metaRoutes];
