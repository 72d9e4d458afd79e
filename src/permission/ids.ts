import { randomInt } from 'crypto'

/**
 * Letters and digits that cannot be mistaken for one another when read
 * aloud or typed on a phone: no `0`/`o`, `1`/`l`/`i`.
 */
export const idAlphabet = 'abcdefghjkmnpqrstuvwxyz23456789'

/**
 * A short lowercase id (default 4 characters, about 920 000 values) that
 * `taken` does not know; grows by one character after 20 collisions, so it
 * always ends. Used for approval ids (issue 3, item 7) and rule ids.
 */
export function shortId(taken: (id: string) => boolean, length = 4): string {
  for (let attempt = 0; ; attempt++) {
    const size = length + Math.floor(attempt / 20)
    let id = ''
    for (let i = 0; i < size; i++) id += idAlphabet[randomInt(idAlphabet.length)]
    if (!taken(id)) return id
  }
}
