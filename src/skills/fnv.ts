/** FNV-1a 32-bit offset basis and prime (http://www.isthe.com/chongo/tech/comp/fnv/). */
const offsetBasis = 0x811c9dc5
const prime = 0x01000193

/**
 * FNV-1a, 32 bits, over the UTF-16 code units of `text` (RuleGo seed: skills
 * are cached "基于文件指纹（FNV 哈希）"). Returns an unsigned 32-bit integer.
 * Fast and well spread; not a cryptographic hash.
 */
export function fnv1a(text: string, hash = offsetBasis): number {
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index)
    hash = Math.imul(hash, prime)
  }
  return hash >>> 0
}
