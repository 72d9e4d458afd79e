import { createWriteStream, mkdirSync, WriteStream } from 'fs'
import { dirname } from 'path'
import { stripVTControlCharacters } from 'util'

/**
 * Applies carriage returns and backspaces the way a terminal shows them:
 * `10%\r20%\r30%` is `30%`, `abcdef\rXY` is `XYcdef`. Other control
 * characters but tabs are dropped.
 */
export function foldLine(line: string): string {
  if (!/[\r\b\x00-\x08\x0b-\x1f\x7f]/.test(line)) return line
  const cells: string[] = []
  let cursor = 0
  for (const char of line) {
    if (char === '\r') cursor = 0
    else if (char === '\b') cursor = Math.max(0, cursor - 1)
    else if (char === '\t' || char >= ' ' && char !== '\x7f') cells[cursor++] = char
  }
  return cells.join('').replace(/\s+$/, '')
}

/** A terminal line as the model reads it: ANSI sequences stripped, `\r` frames folded. */
export function cleanLine(line: string): string {
  return foldLine(stripVTControlCharacters(line))
}

/** Options of {@link OutputCollector}. */
export interface OutputOptions {
  /** Bytes of output shown; above it, head and tail are shown and the whole goes to `spoolPath`. */
  limit: number
  /** File for the whole output when it exceeds `limit` (created then). */
  spoolPath: () => string
  /** Complete lines as they arrive, for progress events. */
  onLines?: (lines: string[]) => void
}

/** The collected output of a command. */
export interface CollectedOutput {
  /** What the model is shown: everything, or head + a note + tail. */
  text: string
  /** Bytes of cleaned output in total. */
  bytes: number
  truncated: boolean
  /** Where the whole output was saved, when truncated. */
  spoolPath?: string
  /** The spool file could not be written (its error). */
  spoolError?: string
}

/**
 * Collects the output of a terminal (issue "Built-in tools", item 5): CRLF
 * from the terminal becomes LF, ANSI sequences are stripped, `\r` progress
 * frames are folded into their final state, and at most `limit` bytes are
 * kept. When the output grows past `limit`, the first half of the budget is
 * kept as the head, the last lines up to the other half as the tail, and
 * every line is streamed to a spool file. Memory stays about `limit` bytes
 * whatever the command prints.
 */
export class OutputCollector {
  private pending = ''
  private lines: string[] = []
  private keptBytes = 0
  private head: string[] = []
  private tail: string[] = []
  private tailBytes = 0
  private total = 0
  private spool?: WriteStream
  private spoolPath?: string
  private spoolError?: string

  constructor(private options: OutputOptions) {}

  /** Feeds raw terminal output. */
  write(chunk: string) {
    this.pending += chunk
    const last = this.pending.lastIndexOf('\n')
    if (last === -1) {
      // A progress bar without line breaks: keep only its current state.
      if (this.pending.length > 8192) this.pending = this.foldPending()
      // A very long line without breaks: pass it on in pieces, memory stays bounded.
      if (this.pending.length > Math.max(this.options.limit, 65536)) {
        const piece = cleanLine(this.pending)
        this.pending = ''
        this.add(piece)
        this.options.onLines?.([piece])
      }
      return
    }
    const complete = this.pending.slice(0, last).split('\n').map((line) => cleanLine(line))
    this.pending = this.pending.slice(last + 1)
    for (const line of complete) this.add(line)
    this.options.onLines?.(complete)
  }

  private foldPending() {
    const cut = this.pending.lastIndexOf('\x1b')
    // Keep an escape sequence that may still be arriving untouched.
    if (cut > this.pending.length - 32) return cleanLine(this.pending.slice(0, cut)) + this.pending.slice(cut)
    return cleanLine(this.pending)
  }

  private add(line: string) {
    const bytes = Buffer.byteLength(line, 'utf8') + 1
    this.total += bytes
    if (!this.spool && !this.spoolError && this.keptBytes + bytes <= this.options.limit) {
      this.lines.push(line)
      this.keptBytes += bytes
      return
    }
    if (!this.spool && !this.spoolError) this.startSpool()
    this.spool?.write(line + '\n')
    const shown = this.cut(line, bytes)
    this.tail.push(shown)
    this.tailBytes += Buffer.byteLength(shown, 'utf8') + 1
    while (this.tailBytes > this.options.limit / 2 && this.tail.length > 1) {
      this.tailBytes -= Buffer.byteLength(this.tail.shift()!, 'utf8') + 1
    }
  }

  /** A line cut to a quarter of the budget, for the head and the tail. */
  private cut(line: string, bytes: number) {
    const max = Math.floor(this.options.limit / 4)
    if (bytes <= max) return line
    return `${line.slice(0, max)} … [line cut: ${bytes - 1} bytes]`
  }

  /** Switches to head + tail: the head is the start of what was kept, the rest goes to the tail. */
  private startSpool() {
    const half = this.options.limit / 2
    let headBytes = 0
    let index = 0
    for (; index < this.lines.length; index++) {
      const bytes = Buffer.byteLength(this.lines[index], 'utf8') + 1
      if (headBytes + bytes > half) break
      headBytes += bytes
    }
    this.head = this.lines.slice(0, index)
    this.tail = this.lines.slice(index).map((line) => this.cut(line, Buffer.byteLength(line, 'utf8') + 1))
    this.tailBytes = this.tail.reduce((sum, line) => sum + Buffer.byteLength(line, 'utf8') + 1, 0)
    try {
      this.spoolPath = this.options.spoolPath()
      mkdirSync(dirname(this.spoolPath), { recursive: true })
      this.spool = createWriteStream(this.spoolPath, { mode: 0o600 })
      this.spool.on('error', (error) => this.spoolError = error.message)
      this.spool.write(this.lines.length ? this.lines.join('\n') + '\n' : '')
    } catch (error) {
      this.spoolError = error?.message ?? String(error)
      this.spoolPath = undefined
    }
    this.lines = []
  }

  /** Ends the output: the last partial line is added, the spool file is closed. */
  async finish(): Promise<CollectedOutput> {
    if (this.pending) {
      const line = cleanLine(this.pending)
      this.pending = ''
      if (line) {
        this.add(line)
        this.options.onLines?.([line])
      }
    }
    if (this.spool) await new Promise<void>((resolve) => this.spool!.end(resolve))
    const truncated = !!(this.spool || this.spoolError || this.head.length)
    if (!truncated) {
      return { text: trimEnd(this.lines).join('\n'), bytes: this.total, truncated: false }
    }
    const shownBytes = [...this.head, ...this.tail].reduce((sum, line) => sum + Buffer.byteLength(line, 'utf8') + 1, 0)
    const where = this.spoolPath && !this.spoolError
      ? `the whole output is saved at ${this.spoolPath}`
      : `the whole output could not be saved${this.spoolError ? `: ${this.spoolError}` : ''}`
    const note = `[… ${this.total - shownBytes} bytes omitted (${this.total} bytes in total); ${where} …]`
    return {
      text: [...this.head, note, ...trimEnd(this.tail)].join('\n'),
      bytes: this.total,
      truncated: true,
      spoolPath: this.spoolError ? undefined : this.spoolPath,
      spoolError: this.spoolError,
    }
  }
}

/** Drops empty lines at the end. */
function trimEnd(lines: string[]) {
  let end = lines.length
  while (end > 0 && lines[end - 1] === '') end--
  return lines.slice(0, end)
}
