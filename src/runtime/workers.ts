import { createApp } from "../app";
import { type Env, readConfig } from "../env";
import { sweep } from "../recovery/sweep";
import { depsAt, type Services } from "../services";
import { buyFrontDoor } from "./buy-front-door";
import { createServices } from "./create-services";

let services: Services | undefined;

/** The isolate's services, built from the first bindings it sees (they are stable for its life). */
function servicesOf(env: Env): Services {
  services ??= createServices(readConfig(env));
  return services;
}

const app = createApp({
  services: (c) => servicesOf(c.env as Env),
  defer: (c) => (task) => c.executionCtx.waitUntil(task),
  clientIp: (c) => c.req.header("CF-Connecting-IP"),
});

/**
 * The Workers entry: a buy the isolate can refuse from memory at its front door (src/runtime/buy-front-door.ts),
 * every other request through the app; the Cron Trigger runs the sweeper in `waitUntil`.
 */
export default {
  fetch(request, env, ctx) {
    const door = buyFrontDoor(
      request,
      () => servicesOf(env),
      (task) => ctx.waitUntil(task),
    );
    return door
      ? door.then((answer) => answer ?? app.fetch(request, env, ctx))
      : app.fetch(request, env, ctx);
  },
  scheduled(_controller, env, ctx) {
    const deps = depsAt(servicesOf(env), (task) => ctx.waitUntil(task));
    ctx.waitUntil(sweep(deps));
  },
} satisfies ExportedHandler<Env>;
