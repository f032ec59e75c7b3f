import type { Scenario } from "../scenario";
import { qstashChaos } from "./qstash-chaos";

/** Every scenario `npm run chaos` runs, in order. */
export const scenarios: Scenario[] = [qstashChaos];
