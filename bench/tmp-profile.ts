import { floorRuntimes } from "./phases/floor-runtimes";
import { startEnvironment } from "./setup/environment";

const log = (l: string) => console.log(l);
const env = await startEnvironment(log, { worker: false });
env.vars.BUN_OPTIONS = "--cpu-prof-md --cpu-prof-dir=/tmp/floorprof --cpu-prof-interval=100";
try {
  await floorRuntimes(
    env,
    { workers: false, servers: ["bun"] },
    { seconds: 4, connections: 50, tokens: 100000, out: "/tmp/floorprof/out" },
    log,
  );
} finally {
  await env.stop();
}
process.exit(0);
