import { callApi } from "./api.js";
import { byId, setText } from "./dom.js";
import { readEventStream } from "./event-stream.js";
import { formatSeconds } from "./format.js";

const VERDICT_TEXT = {
  will_get: "You will get one: your turn comes at the next step.",
  may_get: "Maybe: only if holds or unpaid orders ahead of you come back.",
  will_not_get: "You will not get one: every unit that could still come back is promised ahead of you.",
  admitted: "It's your turn: a unit is held for you. Buy before the timer runs out.",
  lapsed: "Your turn has passed.",
};

/** Solves an ALTCHA challenge (SHA-256 of salt + n) in the page: the cost of joining a busy queue. */
async function solve(challenge) {
  const encoder = new TextEncoder();
  for (let n = 0; n <= challenge.maxnumber; n++) {
    const digest = await crypto.subtle.digest("SHA-256", encoder.encode(challenge.salt + n));
    const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    if (hex === challenge.challenge) {
      const { algorithm, salt, signature } = challenge;
      return btoa(JSON.stringify({ algorithm, challenge: challenge.challenge, number: n, salt, signature }));
    }
  }
  return null;
}

/**
 * The waiting room of a queue or draw sale on the shopper page: a join button (solving the proof of work
 * when the sale asks for one), then the ticket pushed live (position, frontier, verdict, wait), the
 * draw's seed hash and, after the draw, its seed. `admission()` is the token the buy must carry.
 * `onChange()` re-renders the buy button.
 */
export function createQueuePanel({ onChange }) {
  const panel = byId("queue-panel");
  const joinButton = byId("queue-join");
  let sale = null;
  let shopper = null;
  let ticket = null;
  let stop = null;

  function render() {
    const inRoom = Boolean(sale?.admission) && sale.admission !== "open";
    panel.hidden = !inRoom;
    if (!inRoom) return;
    joinButton.hidden = Boolean(ticket) || !shopper;
    setText(byId("queue-mode"), sale.admission === "draw" ? "Entry by draw" : "Queue");
    if (!ticket) {
      setText(byId("queue-position"), "–");
      setText(byId("queue-frontier"), "–");
      setText(byId("queue-wait"), "–");
      setText(byId("queue-verdict"), shopper ? "Join to get your place." : "Sign in to join.");
    } else {
      setText(byId("queue-position"), String(ticket.position));
      setText(byId("queue-frontier"), String(ticket.frontier));
      setText(byId("queue-wait"), formatSeconds(ticket.estimatedWaitSeconds));
      setText(byId("queue-verdict"), VERDICT_TEXT[ticket.verdict] ?? ticket.verdict);
      panel.dataset.verdict = ticket.verdict;
    }
    onChange();
  }

  async function showDraw() {
    const r = await callApi(`/api/sales/${encodeURIComponent(sale.saleId)}/draw`);
    if (!r.ok) return;
    const seed = r.data.seed ? ` · seed ${r.data.seed}` : "";
    setText(byId("queue-draw"), `Seed hash ${r.data.seedHash}${seed}`);
  }

  function follow() {
    stop?.abort();
    const controller = new AbortController();
    stop = controller;
    const path = `/api/sales/${encodeURIComponent(sale.saleId)}/queue/events`;
    const loop = async () => {
      while (!controller.signal.aborted) {
        await readEventStream(path, {
          token: shopper.token,
          signal: controller.signal,
          onEvent: (e) => {
            if (e.event !== "ticket") return;
            const before = ticket?.verdict;
            ticket = JSON.parse(e.data);
            render();
            if (before !== ticket.verdict) showDraw();
          },
        });
        await new Promise((r) => setTimeout(r, 2000));
      }
    };
    loop();
  }

  async function join() {
    joinButton.disabled = true;
    setText(byId("queue-verdict"), "Joining…");
    const body = {};
    if (sale.proofOfWork) {
      setText(byId("queue-verdict"), "Proving you are not a bot (a few seconds of work)…");
      const c = await callApi(`/api/sales/${encodeURIComponent(sale.saleId)}/queue/challenge`, {
        token: shopper.token,
      });
      if (c.ok) body.challenge = await solve(c.data);
    }
    const r = await callApi(`/api/sales/${encodeURIComponent(sale.saleId)}/queue`, {
      method: "POST",
      token: shopper.token,
      body,
    });
    joinButton.disabled = false;
    if (!r.ok) return setText(byId("queue-verdict"), r.error.message);
    ticket = r.data;
    render();
    follow();
  }

  joinButton.addEventListener("click", join);

  return {
    /** Shows the room of `nextSale` for `nextShopper` (null when signed out); picks up an existing ticket. */
    async show(nextSale, nextShopper) {
      stop?.abort();
      sale = nextSale;
      shopper = nextShopper;
      ticket = null;
      render();
      if (!sale?.admission || sale.admission === "open") return;
      showDraw();
      if (!shopper) return;
      const r = await callApi(`/api/sales/${encodeURIComponent(sale.saleId)}/queue/me`, {
        token: shopper.token,
      });
      if (r.ok) {
        ticket = r.data;
        render();
        follow();
      }
    },
    /** The `Admission` token while admitted, else null. */
    admission: () => (ticket?.verdict === "admitted" ? (ticket.admission?.token ?? null) : null),
    /** Whether the sale on screen admits through a queue or draw. */
    gated: () => Boolean(sale?.admission && sale.admission !== "open"),
    stop: () => stop?.abort(),
  };
}
