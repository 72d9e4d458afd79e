/*
 * Small scanners for the code of two text tools that can run commands
 * themselves: awk (`system()`, pipes to and from commands) and GNU sed
 * (the `e` command and the `e` flag of `s`). They are conservative: what
 * they cannot read with certainty counts as running commands, so the call
 * asks for approval rather than passing.
 */

/** Characters after which a `/` in awk starts a regex literal, not a division. */
const regexAfter = new Set(['', '(', ',', '{', '}', ';', '!', '~', '&', '|', '=', '\n', '?', ':', '['])

/**
 * Whether an awk program may run commands: a call of `system`, a pipe
 * (`print | "cmd"`, `"cmd" | getline`, `|&`), or an `@load`/`@include`
 * directive. Strings, regex literals and comments are skipped; an
 * unterminated one counts as running commands.
 */
export function awkRunsCommands(program: string): boolean {
  let previous = ''
  for (let index = 0; index < program.length; index++) {
    const char = program[index]
    if (char === ' ' || char === '\t' || char === '\r') continue
    if (char === '#') {
      const end = program.indexOf('\n', index)
      if (end === -1) return false
      index = end - 1
      continue
    }
    if (char === '"' || (char === '/' && regexAfter.has(previous))) {
      let end = index + 1
      while (end < program.length && program[end] !== char) {
        if (program[end] === '\\') end++
        if (char === '"' && program[end] === '\n') return true
        end++
      }
      if (end >= program.length) return true
      index = end
      previous = 'x'
      continue
    }
    if (char === '|') {
      if (program[index + 1] === '|') {
        index++
        previous = '|'
        continue
      }
      return true
    }
    if (char === '@') return true
    if (/[A-Za-z_]/.test(char)) {
      let end = index
      while (end < program.length && /[A-Za-z0-9_]/.test(program[end])) end++
      const word = program.slice(index, end)
      if (word === 'system') return true
      index = end - 1
      previous = 'x'
      continue
    }
    previous = char
  }
  return false
}

/** sed commands followed by a file name or text up to the end of the line. */
const toEndOfLine = new Set(['a', 'i', 'c', 'r', 'R', 'w', 'W'])
/** sed commands followed by an optional label up to `;` or the end of the line. */
const withLabel = new Set(['b', 't', 'T', ':'])
/** sed commands without arguments (or an optional number). */
const plain = new Set(['d', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', '=', 'z', 'F', 'l', 'L', 'q', 'Q', '{', '}'])

/** Reads a delimited part (`/re/`, the parts of `s` and `y`) from `start` (just after the opening delimiter). */
function delimited(script: string, start: number, delimiter: string): number {
  let index = start
  while (index < script.length && script[index] !== delimiter) {
    if (script[index] === '\\') index++
    if (script[index] === '\n' && delimiter !== '\n') return -1
    index++
  }
  return index < script.length ? index : -1
}

/**
 * Whether a sed script may run commands with GNU sed: the `e` command,
 * or an `s` command with the `e` flag. Addresses, regexes, `s`/`y` parts,
 * labels and text arguments are skipped; anything it cannot parse counts
 * as running commands.
 */
export function sedRunsCommands(script: string): boolean {
  let index = 0
  const skipSpace = () => {
    while (index < script.length && /[\s;]/.test(script[index])) index++
  }
  const address = () => {
    if (script[index] === '/' || script[index] === '\\') {
      const delimiter = script[index] === '\\' ? script[++index] : '/'
      const end = delimited(script, index + 1, delimiter)
      if (end === -1) return false
      index = end + 1
      while (/[IM]/.test(script[index] ?? '')) index++
    } else {
      while (index < script.length && /[0-9$~+]/.test(script[index])) index++
    }
    return true
  }
  while (true) {
    skipSpace()
    if (index >= script.length) return false
    if (!address()) return true
    if (script[index] === ',') {
      index++
      if (!address()) return true
    }
    while (/[\s!]/.test(script[index] ?? '')) index++
    const command = script[index++]
    if (command === undefined) return false
    if (command === '#') {
      const end = script.indexOf('\n', index)
      if (end === -1) return false
      index = end
    } else if (command === 'e') {
      return true
    } else if (command === 's' || command === 'y') {
      const delimiter = script[index]
      if (!delimiter || delimiter === '\n' || delimiter === '\\') return true
      const middle = delimited(script, index + 1, delimiter)
      if (middle === -1) return true
      const end = delimited(script, middle + 1, delimiter)
      if (end === -1) return true
      index = end + 1
      if (command === 's') {
        while (index < script.length && /[gpiImMe0-9w]/.test(script[index])) {
          if (script[index] === 'e') return true
          if (script[index] === 'w') {
            const line = script.indexOf('\n', index)
            index = line === -1 ? script.length : line
            break
          }
          index++
        }
      }
    } else if (toEndOfLine.has(command)) {
      const line = script.indexOf('\n', index)
      index = line === -1 ? script.length : line
    } else if (withLabel.has(command)) {
      while (index < script.length && !/[;\n]/.test(script[index])) index++
    } else if (plain.has(command)) {
      while (/[0-9]/.test(script[index] ?? '')) index++
    } else {
      return true
    }
  }
}
