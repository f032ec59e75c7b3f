import { z } from "@hono/zod-openapi";

/** The dev login's body cap. */
export const MAX_DEV_BODY_BYTES = 1024;

const userIdMessage = "userId must be 1 to 64 letters, digits, or . _ @ -";

/** `POST /api/dev/login` body: the user id to sign a shopper token for. */
export const devLoginBodySchema = z
  .object(
    {
      userId: z
        .string({ error: userIdMessage })
        .regex(/^[\w.@-]{1,64}$/, userIdMessage)
        .openapi({ description: "Any user id (it becomes the token's `sub`).", example: "alice" }),
    },
    { error: "The body must be a JSON object." },
  )
  .openapi("DevLoginRequest");

export const devLoginSchema = z
  .strictObject({
    userId: z.string().openapi({ example: "alice" }),
    token: z.string().openapi({
      description: "A shopper JWT (HS256 with JWT_SECRET), for `Authorization: Bearer <token>`.",
      example: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl",
    }),
    expiresAt: z.iso.datetime().openapi({ description: "The token's `exp` (12 hours after it was minted)." }),
  })
  .openapi("DevLogin");

export const devLoginStatusSchema = z
  .strictObject({
    enabled: z.boolean().openapi({ description: "Whether `POST /api/dev/login` mints tokens here." }),
  })
  .openapi("DevLoginStatus");
