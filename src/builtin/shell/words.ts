import type { Assignment, Word, WordPart } from 'unbash'

/** A word of a command as the analysis sees it. */
export interface ArgWord {
  /** The word after quote removal, or `undefined` when the shell builds it at run time. */
  value: string | undefined
  /** The word as written. */
  text: string
  /** {@link literalStart}: the value, or the literal start of a word built at run time. */
  literal: string
  /** Offsets into the analysed source. */
  pos: number
  end: number
}

/** Word parts whose text is known without running anything. */
function isStaticPart(part: WordPart): boolean {
  switch (part.type) {
    case 'Literal':
    case 'SingleQuoted':
    case 'AnsiCQuoted':
      return true
    case 'DoubleQuoted':
    case 'LocaleString':
      return part.parts.every((child) => child.type === 'Literal')
    default:
      // Expansions, substitutions, globs and brace expansions depend on run time.
      return false
  }
}

/**
 * The value of a word after quote removal (`c'h'mod` → `chmod`, `\rm` →
 * `rm`, `$'\x63hmod'` → `chmod`), or `undefined` when any part of it is
 * built at run time: parameter, command, arithmetic or process
 * substitution, glob, brace expansion.
 */
export function staticValue(word: Word | undefined): string | undefined {
  if (!word) return undefined
  if (!word.parts) return word.value
  return word.parts.every(isStaticPart) ? word.value : undefined
}

/**
 * The start of a word that is known without running anything: the whole
 * value when it is static, else its static parts up to the first one built
 * at run time (`../*.txt` → `../`, `~/"$x"` → `~/`, `$HOME/x` → `''`).
 */
export function literalStart(word: Word | undefined): string {
  if (!word) return ''
  if (!word.parts) return word.value ?? ''
  let literal = ''
  for (const part of word.parts) {
    if (part.type === 'DoubleQuoted' || part.type === 'LocaleString') {
      for (const child of part.parts) {
        if (child.type !== 'Literal') return literal
        literal += child.value
      }
    } else if (isStaticPart(part)) {
      literal += (part as { value?: string }).value ?? ''
    } else {
      break
    }
  }
  return literal
}

/** A word or a suffix assignment (`export A=1`) as an {@link ArgWord}. */
export function argWord(node: Word | Assignment): ArgWord {
  if (node.type === 'Assignment') {
    const word = node.value.type === 'Word' ? node.value : undefined
    const prefix = `${node.name}${node.append ? '+=' : '='}`
    const value = staticValue(word)
    return { value: value === undefined ? undefined : prefix + value, text: node.text, literal: prefix + literalStart(word), pos: node.pos, end: node.end }
  }
  const value = staticValue(node)
  return { value, text: node.text, literal: value ?? literalStart(node), pos: node.pos, end: node.end }
}

/** The last path segment: `/usr/bin/rm` → `rm`. */
export function basename(name: string) {
  const index = name.lastIndexOf('/')
  return index === -1 ? name : name.slice(index + 1)
}

/**
 * Directories whose programs are judged by their base name. A command
 * given by any other path (`./x.sh`, `~/bin/x`, `/tmp/x`) runs a program
 * that cannot be judged by its name (issue "Built-in tools", item 6).
 */
export const systemBinDirs = new Set([
  '/bin', '/sbin', '/usr/bin', '/usr/sbin', '/usr/local/bin', '/usr/local/sbin',
  '/opt/homebrew/bin', '/opt/homebrew/sbin', '/usr/games', '/snap/bin',
])

/** Whether a command name given with a path runs from a system directory (`/bin/rm`). */
export function isSystemPath(name: string) {
  const index = name.lastIndexOf('/')
  if (index === -1) return true
  const dir = name.slice(0, index).replace(/\/+$/, '') || '/'
  return systemBinDirs.has(dir.replace(/\/{2,}/g, '/'))
}

/** Whether a word looks like an option: `-x`, `--long`, but not `-` or a negative number. */
export function isOption(value: string | undefined) {
  return !!value && value.length > 1 && value[0] === '-' && !/^-\d+$/.test(value)
}
