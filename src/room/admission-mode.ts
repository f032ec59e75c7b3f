import { type AdmissionMode, admissionOf } from "../catalog/sale-record";
import type { Memory } from "../memory/memory";
import { saleKeys } from "../stock/keys";
import type { RedisStore as Redis } from "../stores/redis-store";
import { withRedis } from "../stores/with-redis";

/**
 * A sale's admission mode: from the process's memory (it never changes), else one HGET of the sale's
 * meta, remembered. A sale Redis does not hold (lost, being rebuilt) is answered "open" unremembered:
 * its buy then meets the reservation script's own answer for a missing sale (503).
 */
export async function admissionModeOf(
  d: { redis: Redis; memory: Pick<Memory, "admissionModes"> },
  saleId: string,
): Promise<AdmissionMode> {
  const known = d.memory.admissionModes.get(saleId);
  if (known) return known;
  const stored = await withRedis(() => d.redis.hget<string>(saleKeys(saleId).meta, "admission"));
  if (stored === null) return "open";
  const mode = admissionOf(stored);
  d.memory.admissionModes.set(saleId, mode);
  return mode;
}
