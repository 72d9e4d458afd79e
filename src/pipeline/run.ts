import { Dict } from 'koishi'
import { ToolError, ToolStatus } from '../types'
import { ToolRunError } from './errors'
import { SerialLock } from './serial'
import { CallRecord, LazyAbort } from './call'

/** Why a run ended without a value. */
export class RunInterrupted extends Error {
  constructor(public status: 'timeout' | 'aborted', message: string, public params: Dict = {}) {
    super(message)
  }
}

/** The outcome of step 7: the value `run` returned, or a failure. */
export type RunOutcome =
  | { ok: true; value: unknown }
  | { ok: false; status: ToolStatus; error: ToolError }

/**
 * Runs a tool (DESIGN.md pipeline step 7). `timeout` is in ms; when it
 * passes, the run's AbortSignal aborts and the call ends with status
 * `timeout` at once, even if `run` ignores the signal. An abort of `outer`
 * ends it with `aborted`. Unless `parallel`, the run holds `lock` so such
 * tools never overlap; the timeout counts from when the lock is held.
 * Errors thrown by `run` become `error` results (a `ToolRunError` keeps its
 * code and status); nothing is thrown.
 */
export function runTool(call: CallRecord, options: RunOptions): RunOutcome | Promise<RunOutcome> {
  // Fast path: a parallel tool that answers synchronously needs no lock, timer or race.
  if (options.parallel && !options.outer?.aborted) {
    const abort = call.abort = new LazyAbort()
    let returned: unknown
    try {
      returned = call.entry.definition.run(call.args, call)
    } catch (error) {
      return { ok: false, ...describeRunError(error, abort) }
    }
    if (!isThenable(returned)) return { ok: true, value: returned }
    return settle(call, options, abort, returned)
  }
  return settle(call, options, call.abort = new LazyAbort())
}

/** Options of {@link runTool}: `timeout` in ms. */
export interface RunOptions {
  timeout: number
  parallel: boolean
  lock: SerialLock
  outer?: AbortSignal
}

/** Runs (or, given `started`, finishes) a call under the lock, the timeout and the caller's signal. */
async function settle(call: CallRecord, options: RunOptions, abort: LazyAbort, started?: PromiseLike<unknown>): Promise<RunOutcome> {
  const { outer, timeout, parallel, lock } = options
  const onOuterAbort = () => abort.abort(new RunInterrupted('aborted', 'the call was aborted'))
  if (outer?.aborted) onOuterAbort()
  else outer?.addEventListener('abort', onOuterAbort, { once: true })
  let release: (() => void) | undefined
  let timer: NodeJS.Timeout | undefined
  try {
    if (!parallel) release = await lock.acquire(abort.signal)
    if (abort.aborted) throw abort.reason
    const returned = started ?? call.entry.definition.run(call.args, call)
    // A synchronous tool has finished already: no timer, no race.
    if (!isThenable(returned)) return { ok: true, value: returned }
    const interrupted = new Promise<never>((_, reject) => abort.onAbort = reject)
    if (Number.isFinite(timeout) && timeout > 0) {
      timer = setTimeout(() => {
        abort.abort(new RunInterrupted('timeout', `the tool did not finish within ${timeout} ms`, { timeout }))
      }, timeout)
    }
    const value = await Promise.race([returned, interrupted])
    if (abort.aborted) throw abort.reason
    return { ok: true, value }
  } catch (error) {
    return { ok: false, ...describeRunError(error, abort) }
  } finally {
    clearTimeout(timer)
    release?.()
    outer?.removeEventListener('abort', onOuterAbort)
  }
}

/** Whether a value is a promise; a value whose `then` cannot even be read (a hostile proxy) is not. */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  try {
    return !!value && typeof (value as any).then === 'function'
  } catch {
    return false
  }
}

function describeRunError(error: any, abort: LazyAbort): { status: ToolStatus; error: ToolError } {
  // A tool that rethrows the signal's abort error still ends as timeout/aborted.
  const reason = abort.aborted ? abort.reason : error
  if (reason instanceof RunInterrupted) {
    return {
      status: reason.status,
      error: {
        code: reason.status,
        message: reason.message,
        ...reason.status === 'timeout' && { hint: 'Try a smaller task, or ask for less output.' },
        text: { path: `chatluna-tools.error.${reason.status}`, params: reason.params },
      },
    }
  }
  if (error instanceof ToolRunError) {
    return {
      status: error.options.status ?? 'error',
      error: {
        code: error.code,
        message: error.message,
        ...error.options.hint && { hint: error.options.hint },
        ...error.options.issues && { issues: error.options.issues },
        ...error.options.text && { text: error.options.text },
      },
    }
  }
  const name = error?.name && error.name !== 'Error' ? `${error.name}: ` : ''
  return {
    status: 'error',
    error: {
      code: 'run-error',
      message: `${name}${error?.message ?? String(error)}`,
      text: { path: 'chatluna-tools.error.run-error', params: { error: `${name}${error?.message ?? String(error)}` } },
    },
  }
}
