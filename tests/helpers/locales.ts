/** The dotted paths of every leaf of a locale tree (`a.b.c`), for comparing the keys of two locale files. */
export function localeKeys(value: unknown, prefix = '', out: string[] = []): string[] {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value)) localeKeys(inner, prefix ? `${prefix}.${key}` : key, out)
  } else {
    out.push(prefix)
  }
  return out
}
