import type { Scenario } from "../scenario";
import { adminAdjustRetries } from "./admin-adjust-retries";
import { clockSkew } from "./clock-skew";
import { coldBurst } from "./cold-burst";
import { crashBeforePublish } from "./crash-before-publish";
import { databaseLoss } from "./database-loss";
import { dropCrowd } from "./drop-crowd";
import { halfOpen } from "./half-open";
import { jobEndpointDown } from "./job-endpoint-down";
import { lateWritesAfterQuiet } from "./late-writes";
import { mixedWindows } from "./mixed-windows";
import { paymentStorm } from "./payment-storm";
import { deliveriesFailing, postgresRestart } from "./postgres-outage";
import { qstashChaos } from "./qstash-chaos";
import { rebuildWithUnpublished } from "./rebuild-with-unpublished";
import { redisLoss } from "./redis-loss";
import { roomCrowd } from "./room-crowd";
import { roomLoss } from "./room-loss";
import { slotExhaustion } from "./slot-exhaustion";
import { behindTlsProxy } from "./tls-proxy";
import { tokenEnumeration } from "./token-enumeration";

/** Every scenario `npm run chaos` runs, in order. */
export const scenarios: Scenario[] = [
  qstashChaos,
  deliveriesFailing,
  jobEndpointDown,
  crashBeforePublish,
  postgresRestart,
  clockSkew,
  tokenEnumeration,
  redisLoss,
  databaseLoss,
  rebuildWithUnpublished,
  adminAdjustRetries,
  lateWritesAfterQuiet,
  mixedWindows,
  coldBurst,
  behindTlsProxy,
  halfOpen,
  slotExhaustion,
  paymentStorm,
  roomCrowd,
  roomLoss,
  dropCrowd,
];
