import { afterAll, beforeAll } from "vitest";
import { type AppUnderTest, startApp } from "./app";

/**
 * The app for one test file: started before the file's first test, stopped after its last. The object
 * returned is filled in once the app is up (it is empty until then, as at the top of the file).
 *
 * @example
 * const app = appForFile({ vars: { RATE_LIMIT_USER_PER_WINDOW: "1000" } });
 * it("sells", async () => expect((await app.api.createSale({ stock: 5 })).saleId).toBeTruthy());
 */
export function appForFile(opts?: Parameters<typeof startApp>[0]): AppUnderTest {
  const app = {} as AppUnderTest;
  beforeAll(async () => {
    Object.defineProperties(app, Object.getOwnPropertyDescriptors(await startApp(opts)));
  });
  afterAll(async () => {
    await app.stop?.();
  });
  return app;
}
