import type { Scenario } from "../scenario";
import { clockSkew } from "./clock-skew";
import { coldBurst } from "./cold-burst";
import { crashBeforePublish } from "./crash-before-publish";
import { jobEndpointDown } from "./job-endpoint-down";
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
  coldBurst,
];
