import { BloomFilter } from "bloom-filters";

const FALSE_POSITIVE_RATE = 0.001;

/**
 * Builds the Bloom filter of every product token (bloom-filters), sized for twice the tokens it holds
 * at a 0.1 % false-positive rate, and serialises it for Redis.
 */
export function buildTokenFilter(tokens: string[]): string {
  const filter = BloomFilter.create(Math.max(1024, tokens.length * 2), FALSE_POSITIVE_RATE);
  for (const token of tokens) filter.add(token);
  return JSON.stringify(filter.saveAsJSON());
}

/** Reads a filter written by {@link buildTokenFilter}. */
export function parseTokenFilter(json: string): BloomFilter {
  return BloomFilter.fromJSON(JSON.parse(json)) as BloomFilter;
}
