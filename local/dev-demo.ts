/** What `npm run dev` sets up for a person to try: a demo sale, and the instructions it prints. */

/** The demo drop's sizes: EU 38 to 45, the last one nearly gone from the start. */
const SIZES = [38, 39, 40, 41, 42, 43, 44, 45];
const STOCK_PER_SIZE = 120;
const SCARCE_SIZE = 45;
const SCARCE_STOCK = 3;
const PER_USER_LIMIT = 3;

/** The demo drop's variants as the operator API takes them: one per size, priced alike. */
function demoVariants(): Array<Record<string, unknown>> {
  return SIZES.map((size) => ({
    variantId: String(size),
    name: `EU ${size}`,
    priceCents: 12900,
    stock: size === SCARCE_SIZE ? SCARCE_STOCK : STOCK_PER_SIZE,
    ...(size === SCARCE_SIZE ? { description: "The last few pairs in this size." } : {}),
  }));
}

/**
 * A sneaker drop in sizes EU 38–45 (120 pairs each, EU 45 only 3), at most 3 pairs per shopper, live for a
 * day, created through the operator API with `variants`.
 */
export async function createDemoSale(
  workerUrl: string,
  adminToken: string,
): Promise<{ saleId: string; productToken: string }> {
  const now = Date.now();
  const res = await fetch(`${workerUrl}/api/admin/sales`, {
    method: "POST",
    headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({
      productId: "demo-aero-runner",
      name: "Aero Runner sneakers — drop",
      description:
        "A light everyday runner, dropped in eight sizes. Pick one or several; one press buys the lot.",
      imageUrl: "/images/demo-sneaker.svg",
      variants: demoVariants(),
      perUserLimit: PER_USER_LIMIT,
      startsAt: new Date(now - 1000).toISOString(),
      endsAt: new Date(now + 24 * 3600_000).toISOString(),
      paymentWindowSeconds: 300,
    }),
  });
  if (res.status !== 201) throw new Error(`creating the demo sale failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as { saleId: string; productToken: string };
}

/** Where the pages are, and how to buy from a terminal. */
export function printInstructions(
  workerUrl: string,
  runtime: string,
  sale: { saleId: string; productToken: string },
  adminToken: string,
): void {
  const lines = [
    "",
    `  Flash sale running locally (engine on ${runtime})`,
    `  Shopper page     ${workerUrl}/`,
    `  Operator page    ${workerUrl}/admin.html   (operator token: ${adminToken})`,
    `  Demo sale        ${sale.saleId}: sneakers in sizes EU ${SIZES[0]}–${SIZES.at(-1)} (${STOCK_PER_SIZE} pairs each, EU ${SCARCE_SIZE} only ${SCARCE_STOCK}), limit ${PER_USER_LIMIT} per user, live now`,
    "",
    "  Buy from a terminal:",
    `    TOKEN=$(curl -s -X POST ${workerUrl}/api/dev/login -H 'Content-Type: application/json' -d '{"userId":"alice"}' | sed 's/.*"token":"\\([^"]*\\)".*/\\1/')`,
    `    curl -s -X POST ${workerUrl}/api/buy/${sale.productToken} -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"items":[{"variantId":"42","quantity":1},{"variantId":"43","quantity":1}]}'`,
    `    curl -s ${workerUrl}/api/orders/<orderId> -H "Authorization: Bearer $TOKEN"`,
    `    curl -s -X POST ${workerUrl}/api/orders/<orderId>/checkout -H "Authorization: Bearer $TOKEN"   # open its "url" to pay`,
    `    curl -s ${workerUrl}/api/admin/sales/${sale.saleId}/stats -H 'Authorization: Bearer ${adminToken}'`,
    "",
    "  Shopper tokens are HS256 JWTs signed with JWT_SECRET from .dev.vars (claim sub = user id);",
    "  POST /api/dev/login mints one for any user id on the local stack. Ctrl-C stops everything.",
    "  Payments: PAYMENT_PROVIDER=stripe, pointed at the local Stripe stand-in (http://127.0.0.1:8082): the",
    "  shopper page's Pay opens its checkout page, whose Pay sends the signed webhook that makes the order paid.",
    "",
  ];
  console.log(lines.join("\n"));
}
