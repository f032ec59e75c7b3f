import { byId, setText } from "./dom.js";
import { formatCountdown, formatInt, formatWhen } from "./format.js";

/** The countdown box of the sale page: what it says for each status, on the server's clock. */
export function createTimer() {
  const box = byId("timer");
  const label = byId("timer-label");
  const value = byId("timer-value");
  const note = byId("timer-note");

  return {
    render(sale, status, now) {
      const starts = Date.parse(sale.startsAt);
      const ends = Date.parse(sale.endsAt);
      let view;
      if (status === "upcoming")
        view = ["", "Opens in", formatCountdown(starts - now), `Starts ${formatWhen(starts)}`];
      else if (status === "opening") view = ["", "Opening", "0:00", "Getting the sale ready…"];
      else if (status === "live")
        view = ["live", "Live now · ends in", formatCountdown(ends - now), `Ends ${formatWhen(ends)}`];
      else if (status === "sold_out")
        view = ["quiet", "Sold out", `${formatInt(0)} left`, "Every unit has been claimed."];
      else if (status === "paused")
        view = ["quiet", "Paused", "On hold", "The shop paused this sale. It resumes shortly."];
      else view = ["quiet", "Ended", "Closed", `Ended ${formatWhen(ends)}`];
      box.dataset.tone = view[0];
      box.dataset.status = status;
      setText(label, view[1]);
      setText(value, view[2]);
      setText(note, view[3]);
    },
  };
}
