/** A room phase's client process (`room-load.ts`), through {@link ForkedClients}. */
import { ForkedClients } from "./forked-clients";
import type { ToRoomLoad } from "./room-load";

export type RoomClients = ForkedClients<ToRoomLoad>;
export const RoomClients = {
  start: () => ForkedClients.start<ToRoomLoad>("room-load.ts", "room clients"),
};
