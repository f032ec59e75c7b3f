import { StoreUnavailableError } from "../errors";

/** Runs a Redis call; any failure of the store becomes a {@link StoreUnavailableError} (answered 503). */
export async function withRedis<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new StoreUnavailableError("redis", error);
  }
}
