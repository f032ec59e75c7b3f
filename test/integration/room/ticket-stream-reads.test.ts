import { afterAll, describe, expect, it } from "vitest";
import { saleKeys } from "../../../src/stock/keys";
import { appForFile } from "../../support/app-per-file";
import { roomShoppers } from "../../support/room-shoppers";
import { shopperToken } from "../../support/shopper";
import { openEvents, type SseEvent, type SseReader } from "../../support/sse";

/*
 * A ticket stream whose waiter's ticket cannot be read when the room moves on (Redis lost it and the
 * room is not restored yet, or its record is not written yet) keeps its last frame. CI's room-loss run
 * showed waiters, in the moments after the loss, their place before the seal beside the sealed line's
 * frontier (the stream paired its old copy of the ticket with the new room state), then their real
 * place once the room was back: a place moved.
 */

const app = appForFile({
  vars: {
    RATE_LIMIT_USER_PER_WINDOW: "1000",
    SHOPPER_LIMIT_USER_PER_WINDOW: "1000",
    ADMISSION_SECRET: "admission-secret-for-tests-only",
    ADMISSION_WINDOW_SECONDS: "6",
  },
});
const { join, me } = roomShoppers(app);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const open: SseReader[] = [];
afterAll(() => {
  for (const s of open) s.close();
});

type Shown = { position: number; frontier: number; verdict: string };
const shown = (e: SseEvent) => e.json as Shown;

describe("a ticket stream whose ticket cannot be read", () => {
  it("keeps its last frame, never its place before the seal beside the sealed line's frontier", async () => {
    const startsAt = Date.now() + 2_500;
    const sale = await app.api.createSale({
      admission: "queue",
      stock: 2,
      perUserLimit: 1,
      startsAt: new Date(startsAt).toISOString(),
    });
    // the waiter joins first: its place before the seal (its join number) is 1
    const waiter = "stream-waiter";
    expect((await join(sale.saleId, waiter)).body.position).toBe(1);
    for (let i = 0; i < 4; i++) expect((await join(sale.saleId, `other-${i}`)).status).toBe(200);
    const stream = await openEvents(`${app.worker.url}/api/sales/${sale.saleId}/queue/events`, {
      Authorization: `Bearer ${await shopperToken(waiter)}`,
    });
    open.push(stream);
    expect(stream.status).toBe(200);
    expect(shown(await stream.next((e) => e.event === "ticket"))).toMatchObject({ position: 1, frontier: 0 });

    // Redis no longer holds the waiter's ticket (as after a loss, before the restore): the room seals
    // and admits the others, and the stream's next room state finds nothing to read
    const k = saleKeys(sale.saleId);
    const ticket = await app.redis.hget(k.tickets, waiter);
    await app.redis.multi().hdel(k.tickets, waiter).lrem(k.line, 0, waiter).exec();
    await sleep(Math.max(0, startsAt - Date.now()) + 200);
    const opened = await me(sale.saleId, "other-0");
    expect(opened.status).toBe(200);
    expect(opened.body.frontier).toBeGreaterThan(0);
    // the feed steps the room at each refresh: a few of them pass with the ticket unreadable
    await sleep(3_000);
    expect(stream.events.map(shown).filter((t) => t.frontier > 0)).toEqual([]);

    // the ticket back (as a restore gives it), at the end of the sealed line: the stream shows it
    const place = await app.redis.rpush(k.line, waiter);
    await app.redis.hset(k.tickets, waiter, JSON.stringify({ ...JSON.parse(String(ticket)), p: place }));
    const after = shown(await stream.next((e) => e.event === "ticket" && shown(e).frontier > 0));
    expect(after.position).toBe(place);
    expect(stream.events.map(shown).filter((t) => t.frontier > 0 && t.position !== place)).toEqual([]);
  });
});
