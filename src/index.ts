import { createApp } from "./app";
import type { Env } from "./env";
import { sweep } from "./orders/sweep";

const app = createApp();

export default {
  fetch: app.fetch,
  scheduled(_controller, env, ctx) {
    ctx.waitUntil(sweep(env, Date.now()));
  },
} satisfies ExportedHandler<Env>;
