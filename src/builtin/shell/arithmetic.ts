import type { SyntaxNode, Word } from 'unbash'
import { staticValue } from './words'
import { ShellReason, shellReason } from './reasons'

/*
 * Bash evaluates a variable read in arithmetic as an arithmetic expression
 * itself, and an array subscript in that expression runs its command
 * substitutions: with `a[$(chmod 777 f)]` in a file `f`,
 * `x=$(cat f); echo $((x))` runs chmod although the line only shows `cat`
 * and `echo`. The analysis cannot know such a value, so arithmetic that
 * reads a variable whose value comes from run time asks.
 */

/** Arithmetic comparison operators of `[[ … ]]`, which evaluate both sides as arithmetic. */
const arithmeticTests = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge'])

/** Commands whose identifier arguments receive run-time values. */
const readers = new Set(['read', 'mapfile', 'readarray', 'getopts'])

/** Declaration builtins: with `-i` their values are evaluated as arithmetic. */
const declarations = new Set(['declare', 'typeset', 'local', 'export', 'readonly'])

/** Variable names and positional parameters mentioned in a text. */
function namesIn(text: string): string[] {
  return text.match(/[A-Za-z_][A-Za-z0-9_]*|\$\{?[0-9@*]/g) ?? []
}

/** A value that is surely a number or a known text: static, one `$((…))`, or a length `${#…}`. */
function isSafeValue(word: Word): boolean {
  if (staticValue(word) !== undefined) return true
  const parts = word.parts ?? []
  if (parts.length !== 1) return false
  const [part] = parts as any[]
  return part.type === 'ArithmeticExpansion' || (part.type === 'ParameterExpansion' && part.prefix === '#')
}

/**
 * Collects, over a whole command line (its nested command strings
 * included), the variables that receive run-time values — assignments of
 * substitutions or expansions, `read`/`mapfile`/`getopts`/`printf -v`
 * targets, `for`/`select` variables over run-time words, positional
 * parameters after `set` with run-time words — and the texts of arithmetic
 * contexts: `$((…))`, `((…))`, `for ((…))`, `[[ … -eq … ]]`, `let`,
 * `declare -i`, array subscripts and substring offsets. It over-approximates
 * (any mention of a name counts, scopes are ignored): asking too often is
 * the safe side.
 */
export class ArithmeticTaint {
  private tainted = new Set<string>()
  private positional = false
  private contexts: string[] = []

  /** Looks at one node of the line; `source` is the text its offsets point into. */
  visit(node: SyntaxNode, source: string) {
    const text = (value: { pos: number; end: number }) => source.slice(value.pos, value.end)
    switch (node.type) {
      case 'Assignment':
        if (node.value.type !== 'Word' || !isSafeValue(node.value)) this.tainted.add(node.name)
        if (node.index) this.contexts.push(node.index.text)
        break
      case 'For':
      case 'Select':
        if (node.name?.value && (node.wordlist ?? []).some((word) => staticValue(word) === undefined)) this.tainted.add(node.name.value)
        break
      case 'ArithmeticExpansion':
        this.contexts.push(node.text)
        break
      case 'ArithmeticCommand':
      case 'ArithmeticFor':
        this.contexts.push(text(node))
        break
      case 'TestBinary':
        if (arithmeticTests.has(node.operator)) this.contexts.push(node.left.text, node.right.text)
        break
      case 'ParameterExpansion':
        if (node.index && !['@', '*'].includes(node.index.text)) this.contexts.push(node.index.text)
        if (node.operation?.type === 'Slice') this.contexts.push(node.operation.offset?.text ?? '', node.operation.length?.text ?? '')
        break
      case 'Command':
        this.onCommand(node)
        break
    }
  }

  private onCommand(node: Extract<SyntaxNode, { type: 'Command' }>) {
    const name = staticValue(node.name)
    if (!name) return
    const words = node.suffix.filter((item) => item.type === 'Word') as Word[]
    const values = words.map((word) => staticValue(word))
    if (readers.has(name)) {
      for (const value of values) if (value && /^[A-Za-z_][A-Za-z0-9_]*$/.test(value)) this.tainted.add(value)
    } else if (name === 'printf') {
      const at = values.indexOf('-v')
      if (at !== -1 && values[at + 1]) this.tainted.add(values[at + 1])
    } else if (name === 'set') {
      if (values.some((value) => value === undefined) || values.includes('--')) this.positional = true
    } else if (name === 'let') {
      this.contexts.push(...node.suffix.map((item: any) => item.text ?? ''))
    } else if (declarations.has(name) && values.some((value) => value && /^-[A-Za-z]*i/.test(value))) {
      this.contexts.push(...node.suffix.map((item: any) => item.text ?? ''))
    }
  }

  /** Why the line asks: one problem per tainted name that arithmetic reads. */
  problems(): ShellReason[] {
    const found = new Set<string>()
    for (const context of this.contexts) {
      for (const name of namesIn(context)) {
        if (name.startsWith('$') ? this.positional : this.tainted.has(name)) found.add(name.replace(/^\$\{?/, '$'))
      }
    }
    return [...found].map((name) => shellReason(name.startsWith('$') ? 'arithmetic-positional' : 'arithmetic-variable', { name }))
  }
}
