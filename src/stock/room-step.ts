import roomStepLua from "../../lua/room-step.lua";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";
import { codeOf, type ScriptReply } from "./codes";
import { saleKeys } from "./keys";
import { defineScript, runScript } from "./script";

export const roomStepScript = defineScript(
  "room-step",
  roomStepLua,
  "c9683f0263501f6f00f0456e8c105747bf123d10",
);

/** A ticket as the room keeps it: `s` waiting / admitted / lapsed, `h` units held, `x` admission's end. */
export type StoredTicket = {
  id: string;
  n: number;
  p: number;
  s: "w" | "a" | "l";
  h: number;
  x: number;
  at: number;
  /** the room's journal position of its last change (src/room/room-record.ts) */
  v?: number;
};

/** The room after a step: what every waiter's verdict is derived from (src/room/verdict.ts). */
export type RoomState = {
  /** positions passed by the admission (1..frontier were offered a hold) */
  frontier: number;
  /** no position past it is ever admitted; null until the paid units were first known after the seal */
  cutoff: number | null;
  /** units not held by an admission (remaining − what admitted shoppers may still take) */
  free: number;
  held: number;
  remaining: number;
  sealed: boolean;
  length: number;
  admittedNow: number;
  /**
   * while an operator's pause runs, when it began: the admissions running then are not lapsed (the
   * resume moves their ends by its length); null otherwise
   */
  pausedAt: number | null;
  /** the room's journal position after the step: what it shows is durable once Postgres has it */
  seq: number;
  /** the room's life (a restore moves it on): a position counts only in its life */
  gen: number;
  /** the position up to which Redis was told the journal is in Postgres (lower than a process knows: Redis lost writes) */
  recorded: number;
};

export type StepOutcome =
  | { kind: "stepped"; room: RoomState; ticket: StoredTicket | null }
  | { kind: "not_initialised" }
  | { kind: "no_queue" }
  | { kind: "ended" }
  | { kind: "entries_closed" };

export type StepRequest = {
  saleId: string;
  now: number;
  /** the user joining ("" for none) */
  join: string;
  ticketId: string;
  /** the user whose ticket to return ("" for none) */
  read: string;
  windowMs: number;
  graceMs: number;
  /** units in paid orders, or -1 when unknown (the cutoff is then left as it is) */
  paidUnits: number;
  /** admit nobody at this step (the room's journal cannot be written to Postgres now) */
  hold?: boolean;
};

const CODES = ["OK", "NOT_INITIALISED", "NO_QUEUE", "ENDED", "ENTRIES_CLOSED"] as const;

/** room-step.lua's KEYS, in order (the tests drive the script with the same layout). */
export function roomStepKeys(saleId: string): string[] {
  const k = saleKeys(saleId);
  return [k.meta, k.stock, k.holdings, k.room, k.tickets, k.line, k.late, k.active, k.journal];
}

/** One step of the waiting room (room-step.lua): an optional join, lapses, admissions, the cutoff. */
export async function runRoomStep(redis: Redis, req: StepRequest): Promise<StepOutcome> {
  const keys = roomStepKeys(req.saleId);
  const args = [
    req.now,
    req.join,
    req.ticketId,
    req.windowMs,
    req.graceMs,
    req.paidUnits,
    req.read,
    req.hold ? "1" : "0",
  ];
  const reply = await withRedis(() => runScript<ScriptReply>(redis, roomStepScript, keys, args));
  switch (codeOf("room-step", reply, CODES)) {
    case "NOT_INITIALISED":
      return { kind: "not_initialised" };
    case "NO_QUEUE":
      return { kind: "no_queue" };
    case "ENDED":
      return { kind: "ended" };
    case "ENTRIES_CLOSED":
      return { kind: "entries_closed" };
    case "OK":
      return decodeStep(reply);
  }
}

function decodeStep(reply: ScriptReply): StepOutcome {
  const [
    ,
    ticket,
    frontier,
    cutoff,
    free,
    held,
    remaining,
    sealed,
    length,
    admittedNow,
    pausedAt,
    seq,
    gen,
    recorded,
  ] = reply.map((v, i) => (i === 1 ? v : Number(v)));
  const room: RoomState = {
    frontier: Number(frontier),
    cutoff: Number(cutoff) < 0 ? null : Number(cutoff),
    free: Number(free),
    held: Number(held),
    remaining: Number(remaining),
    sealed: sealed === 1,
    length: Number(length),
    admittedNow: Number(admittedNow),
    pausedAt: pausedAt === undefined || Number(pausedAt) < 0 ? null : Number(pausedAt),
    seq: Number(seq ?? 0),
    gen: Number(gen ?? 0),
    recorded: Number(recorded ?? 0),
  };
  const stored = typeof ticket === "string" && ticket !== "" ? (JSON.parse(ticket) as StoredTicket) : null;
  return { kind: "stepped", room, ticket: stored };
}
