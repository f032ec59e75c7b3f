import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { type RedisProcess, startRedis } from "../../local/redis-process";

/**
 * A private redis-server for one test file: started (with a connection to it) before the file's first
 * test, both closed after its last. `ready` receives them.
 *
 * @example
 * let redis: Redis;
 * redisServerForFile((connection) => {
 *   redis = connection;
 * });
 */
export function redisServerForFile(ready: (redis: Redis, server: RedisProcess) => void): void {
  let server: RedisProcess | undefined;
  let redis: Redis | undefined;
  beforeAll(async () => {
    server = await startRedis({ port: 0 });
    redis = new Redis(server.url);
    ready(redis, server);
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });
}
