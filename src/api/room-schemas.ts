import { z } from "@hono/zod-openapi";

/** The waiting room's join body cap (an ALTCHA solution is a few hundred bytes). */
export const MAX_JOIN_BODY_BYTES = 4 * 1024;

export const joinBodySchema = z
  .object(
    {
      challenge: z
        .union([z.string().max(4096), z.record(z.string(), z.unknown())])
        .optional()
        .openapi({
          description:
            "Sales with `proofOfWork`: the solved ALTCHA challenge, as the ALTCHA widget submits it (base64 of the JSON `{algorithm, challenge, number, salt, signature}`) or that object.",
        }),
    },
    { error: "The body must be a JSON object." },
  )
  .openapi("QueueJoin");

export const ticketSchema = z
  .strictObject({
    ticketId: z.string().openapi({ example: "t0k3j5h7g9f1d3s5a7p9o" }),
    saleId: z.string().openapi({ example: "s4k2x9q1m0abc" }),
    position: z.int().min(1).openapi({
      description:
        "Place in line (1 first). Before the start: the order of joining, until the start's shuffle.",
      example: 42,
    }),
    frontier: z.int().min(0).openapi({ description: "Positions the admission has passed.", example: 30 }),
    verdict: z.enum(["will_get", "may_get", "will_not_get", "admitted", "lapsed"]).openapi({
      description:
        "`will_get`: units are free for this place at the next step; `may_get`: only if holds or unpaid orders ahead come back; `will_not_get`: final, this ticket never gets a unit; `admitted`: a unit is held for you until `admission.expiresAt`; `lapsed`: the admission ended.",
    }),
    estimatedWaitSeconds: z.int().min(0).openapi({ example: 120 }),
    admission: z
      .strictObject({
        token: z.string().openapi({ description: "Send it as the buy's `Admission` header." }),
        expiresAt: z.iso.datetime(),
      })
      .optional(),
  })
  .openapi("Ticket");

export const drawSchema = z
  .strictObject({
    seedHash: z
      .string()
      .openapi({ description: "SHA-256 (hex) of the seed, published from the sale's creation." }),
    entriesHash: z.string().optional().openapi({
      description: 'After the draw: SHA-256 (hex) of the sorted entries (ticket ids) joined by "\\n".',
    }),
    seed: z.string().optional().openapi({ description: "After the draw: the seed (hex)." }),
    entries: z.array(z.string()).optional().openapi({ description: "After the draw: the sorted entries." }),
    drawnAt: z.iso.datetime().optional(),
  })
  .openapi("Draw");

export const challengeSchema = z
  .strictObject({
    algorithm: z.string().openapi({ example: "SHA-256" }),
    challenge: z.string(),
    maxnumber: z.int().optional(),
    salt: z.string(),
    signature: z.string(),
  })
  .openapi("AltchaChallenge");

const count = (description: string) => z.int().min(0).openapi({ description });

export const roomFiguresSchema = z
  .strictObject({
    admission: z.enum(["queue", "draw"]),
    tickets: count("Tickets taken (the room's depth)."),
    sealed: z.boolean().openapi({ description: "The line is in its final order (after the start)." }),
    frontier: count("Positions the admission has passed."),
    cutoff: z.int().min(0).nullable().openapi({ description: "No position past it is ever admitted." }),
    freeUnits: count("Units not held by an admission."),
    heldUnits: count("Units admitted shoppers may still take."),
    verdicts: z.strictObject({
      admitted: count("Admissions running now."),
      passed: count("Positions passed and not admitted now (lapsed, or admitted and over)."),
      will_get: count("Waiting, covered by the free units."),
      may_get: count("Waiting, within the cutoff."),
      will_not_get: count("Waiting past the cutoff (or after the end)."),
    }),
  })
  .openapi("RoomFigures");
