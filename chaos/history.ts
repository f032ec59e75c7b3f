/**
 * The client-side record of a chaos run: every operation as it was invoked and how it ended.
 *
 * An outcome is `ok` (the server acknowledged: 202 for a buy, 200 for pay/cancel), `failed` (a definite
 * refusal: a 4xx, or a buy's 503 which the contract says reserved nothing) or `unknown` (a timeout, a
 * dropped connection, any other 5xx): the operation may or may not have taken effect, and the checker
 * accepts either, as long as the stores agree on which.
 *
 * @example
 * const history = new History();
 * const op = history.invoke({ kind: "buy", userId: "u1", quantity: 1, idempotencyKey: "u1-0" });
 * history.complete(op, { outcome: "ok", status: 202, orderId: "s…-…" });
 */

export type OpKind = "buy" | "pay" | "cancel" | "get";
export type Outcome = "ok" | "failed" | "unknown";

/** `api`: through the worker; `script`: the reservation script run directly (a worker that then died). */
export type Via = "api" | "script";

export type Op = {
  id: number;
  kind: OpKind;
  userId: string;
  via: Via;
  orderId?: string;
  quantity?: number;
  idempotencyKey?: string;
  invokedAt: number;
  completedAt?: number;
  outcome?: Outcome;
  status?: number;
  code?: string;
  /** the order's status in a 200 body (pay, cancel, get) */
  orderStatus?: string;
  note?: string;
};

export type Completion = Partial<
  Pick<Op, "orderId" | "quantity" | "status" | "code" | "orderStatus" | "note">
> & {
  outcome: Outcome;
};

export class History {
  readonly ops: Op[] = [];

  invoke(op: Omit<Op, "id" | "invokedAt" | "via"> & { via?: Via }): Op {
    const entry: Op = { via: "api", ...op, id: this.ops.length, invokedAt: Date.now() };
    this.ops.push(entry);
    return entry;
  }

  complete(op: Op, done: Completion): Op {
    Object.assign(op, done, { completedAt: Date.now() });
    return op;
  }

  /** Operations never completed (still in flight when the run ended) count as unknown. */
  finished(): Op[] {
    return this.ops.map((op) =>
      op.outcome ? op : { ...op, outcome: "unknown" as const, note: "never completed" },
    );
  }

  counts(): Record<OpKind, Record<Outcome, number>> {
    const zero = () => ({ ok: 0, failed: 0, unknown: 0 });
    const out = { buy: zero(), pay: zero(), cancel: zero(), get: zero() };
    for (const op of this.finished()) out[op.kind][op.outcome ?? "unknown"]++;
    return out;
  }

  toJSON(): Op[] {
    return this.finished();
  }

  static fromJSON(ops: Op[]): History {
    const history = new History();
    history.ops.push(...ops);
    return history;
  }
}

/** How an HTTP answer to `kind` counts: see the module comment. */
export function classify(kind: OpKind, status: number): Outcome {
  if (status >= 200 && status < 300) return "ok";
  if (status >= 400 && status < 500) return "failed";
  if (kind === "buy" && status === 503) return "failed";
  return "unknown";
}
