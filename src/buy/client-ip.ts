/** The client address for per-IP limits (CF-Connecting-IP, set by Cloudflare's edge). */
export function clientIp(header: string | undefined): string {
  const ip = header?.trim();
  return ip && ip.length <= 64 ? ip : "unknown";
}
