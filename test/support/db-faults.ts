import type pg from "pg";

/** Makes Postgres refuse adjustment writes as an unreachable database would (SQLSTATE 57P03), or stop. */
export async function failAdjustmentWrites(db: pg.Pool, on: boolean): Promise<void> {
  await db.query(
    on
      ? `create or replace function refuse_adjustment() returns trigger language plpgsql as $$
         begin raise exception 'injected outage' using errcode = '57P03'; end $$;
         create trigger refuse_adjustment before insert on stock_adjustments
         for each row execute function refuse_adjustment();`
      : "drop trigger if exists refuse_adjustment on stock_adjustments",
  );
}
