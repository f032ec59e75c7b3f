import type { WebhookDeps } from "../services";
import { signingEndpoint } from "./endpoint-store";
import { TEST_EVENT_TYPE } from "./event-types";
import { publishDeliveryJobs } from "./publish";

/**
 * Queues a `webhook.test` message to one endpoint (a QStash delivery job like any other). Returns its
 * `webhook-id`, or null when there is no such endpoint.
 */
export async function sendTestEvent(deps: WebhookDeps, endpointId: string): Promise<string | null> {
  const endpoint = await signingEndpoint(deps.db, endpointId);
  if (!endpoint) return null;
  const msgId = `msg_test_${crypto.randomUUID().replaceAll("-", "")}`;
  const payload = {
    type: TEST_EVENT_TYPE,
    timestamp: new Date().toISOString(),
    data: { endpointId, url: endpoint.url },
  };
  await publishDeliveryJobs(deps, [{ endpointId, messages: [{ msgId, payload }], dedupId: msgId }]);
  return msgId;
}
