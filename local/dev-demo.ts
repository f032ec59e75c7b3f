/** What `npm run dev` sets up for a person to try: a demo sale, and the instructions it prints. */

/** A sale of 1,000 units, live for a day, created through the operator API. */
export async function createDemoSale(
  workerUrl: string,
  adminToken: string,
): Promise<{ saleId: string; productToken: string }> {
  const now = Date.now();
  const res = await fetch(`${workerUrl}/api/admin/sales`, {
    method: "POST",
    headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({
      productId: "demo-concert-tickets",
      name: "Concert tickets — flash sale",
      priceCents: 4900,
      stock: 1000,
      perUserLimit: 2,
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
    `  Demo sale        ${sale.saleId}: 1,000 units, limit 2 per user, live now`,
    "",
    "  Buy from a terminal:",
    `    TOKEN=$(curl -s -X POST ${workerUrl}/api/dev/login -H 'Content-Type: application/json' -d '{"userId":"alice"}' | sed 's/.*"token":"\\([^"]*\\)".*/\\1/')`,
    `    curl -s -X POST ${workerUrl}/api/buy/${sale.productToken} -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"quantity":2}'`,
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
