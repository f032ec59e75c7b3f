import type { Scenario } from "../scenario";
import { clockSkew } from "./clock-skew";
import { crashBeforePublish } from "./crash-before-publish";
import { jobEndpointDown } from "./job-endpoint-down";
import { lateWritesAfterQuiet } from "./late-writes";
import { mixedWindows } from "./mixed-windows";
import { deliveriesFailing, postgresRestart } from "./postgres-outage";
import { qstashChaos } from "./qstash-chaos";
import { redisLoss } from "./redis-loss";
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
  lateWritesAfterQuiet,
  mixedWindows,
];
