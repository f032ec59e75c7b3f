/**
 * The waiting room's per-request crypto on the server runtimes: the join's proof-of-work check and the
 * buy's admission check, each run N times in one thread (wall time ≈ CPU here: no I/O).
 *   bun bench/admission-verify.ts · deno run -A bench/admission-verify.ts · npx tsx bench/admission-verify.ts
 * (workerd: `MICRO_ONLY=altcha-verify,admission-verify npx tsx bench/micro.ts`.)
 */
import { createChallenge } from "altcha-lib/v1";
import { signAdmission, verifyAdmission } from "../src/room/admission-token";
import { solvesJoinChallenge } from "../src/room/challenge";

const JWT_SECRET = "bench-secret-bench-secret";
const config = {
  JWT_SECRET,
  ADMISSION_SECRET: undefined,
  ALTCHA_HMAC_KEY: undefined,
  ALTCHA_MAX_NUMBER: 20_000,
};
const at = { saleId: "s1", userId: "u1" };

async function perCall(n: number, step: () => Promise<boolean>): Promise<number> {
  for (let i = 0; i < 200; i++) await step();
  const started = performance.now();
  for (let i = 0; i < n; i++) if (!(await step())) throw new Error("refused");
  return ((performance.now() - started) * 1000) / n;
}

const challenge = await createChallenge({
  hmacKey: `flash-sale altcha key\u0000${JWT_SECRET}`,
  number: 12_345,
  maxnumber: 20_000,
  params: { sale: at.saleId, user: at.userId },
  expires: new Date(Date.now() + 600_000),
});
const payload = btoa(JSON.stringify({ ...challenge, number: 12_345 }));
const token = await signAdmission(config, {
  ...at,
  ticketId: "t",
  units: 1,
  expiresAt: Date.now() + 600_000,
});
const runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
const altcha = await perCall(5_000, () => solvesJoinChallenge(config, payload, at));
const admission = await perCall(
  10_000,
  async () => (await verifyAdmission(config, token, { ...at, now: Date.now() })) !== null,
);
console.log(
  `${runtime}: altcha-verify ${altcha.toFixed(1)} µs/join, admission-verify ${admission.toFixed(1)} µs/buy`,
);
