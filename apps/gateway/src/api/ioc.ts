import type { Request } from 'express';
import type { IocContainer, IocContainerFactory } from '@tsoa/runtime';
import type { GatewayDeps } from '../deps.js';

type ControllerCtor = new (deps: GatewayDeps) => unknown;

/** Controllers are built per request with the app's dependencies; no global singletons. */
export const iocContainer: IocContainerFactory = (req: unknown): IocContainer =>
  ({
    get: (controller: ControllerCtor) => new controller(depsOf(req as Request)),
  }) as IocContainer;

export function depsOf(req: Request): GatewayDeps {
  return req.app.locals['deps'] as GatewayDeps;
}
