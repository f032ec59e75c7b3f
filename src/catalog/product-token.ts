import { hmacKey } from "../crypto/hmac-key";

const encoder = new TextEncoder();
function base64url(bytes: ArrayBuffer): string {
  let binary = "";
  for (const b of new Uint8Array(bytes)) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The purchase URL's token for a product: HMAC-SHA256 of the product id under PRODUCT_TOKEN_SECRET,
 * base64url (43 characters). It cannot be guessed from the product id, so the URL leaks nothing early.
 *
 * @example
 * const token = await productToken(secret, "sku-123"); // "x3Jk…" -> POST /api/buy/x3Jk…
 */
export async function productToken(secret: string, productId: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret, "sign"), encoder.encode(productId));
  return base64url(mac);
}
