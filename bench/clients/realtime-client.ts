/** The realtime phase's client process (`realtime-load.ts`), through {@link ForkedClients}. */
import { ForkedClients } from "./forked-clients";
import type { ToRealtimeLoad } from "./realtime-load";

export type RealtimeClients = ForkedClients<ToRealtimeLoad>;
export const RealtimeClients = {
  start: () => ForkedClients.start<ToRealtimeLoad>("realtime-load.ts", "realtime clients"),
};
