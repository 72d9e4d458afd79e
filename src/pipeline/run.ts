import { ToolCall, ToolError, ToolStatus } from '../types'
import { ToolRunError } from './errors'
import { SerialLock } from './serial'

/** Why a run ended without a value. */
export class RunInterrupted extends Error {
  constructor(public status: 'timeout' | 'aborted', message: string) {
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
export async function runTool(call: ToolCall, options: { timeout: number; parallel: boolean; lock: SerialLock; outer?: AbortSignal }): Promise<RunOutcome> {
  const { outer, timeout, parallel, lock } = options
  const controller = new AbortController()
  const onOuterAbort = () => controller.abort(new RunInterrupted('aborted', 'the call was aborted'))
  if (outer?.aborted) onOuterAbort()
  else outer?.addEventListener('abort', onOuterAbort, { once: true })
  call.signal = controller.signal
  let release: (() => void) | undefined
  let timer: NodeJS.Timeout | undefined
  try {
    if (!parallel) release = await lock.acquire(controller.signal)
    if (controller.signal.aborted) throw controller.signal.reason
    const interrupted = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true })
    })
    if (Number.isFinite(timeout) && timeout > 0) {
      timer = setTimeout(() => {
        controller.abort(new RunInterrupted('timeout', `the tool did not finish within ${timeout} ms`))
      }, timeout)
    }
    const value = await Promise.race([
      Promise.resolve().then(() => call.entry.definition.run(call.args, call)),
      interrupted,
    ])
    return { ok: true, value }
  } catch (error) {
    return { ok: false, ...describeRunError(error, controller.signal) }
  } finally {
    clearTimeout(timer)
    release?.()
    outer?.removeEventListener('abort', onOuterAbort)
  }
}

function describeRunError(error: any, signal: AbortSignal): { status: ToolStatus; error: ToolError } {
  // A tool that rethrows the signal's abort error still ends as timeout/aborted.
  const reason = signal.aborted ? signal.reason : error
  if (reason instanceof RunInterrupted) {
    return {
      status: reason.status,
      error: {
        code: reason.status,
        message: reason.message,
        hint: reason.status === 'timeout' ? 'Try a smaller task, or ask for less output.' : undefined,
      },
    }
  }
  if (error instanceof ToolRunError) {
    return {
      status: error.options.status ?? 'error',
      error: { code: error.code, message: error.message, hint: error.options.hint, issues: error.options.issues },
    }
  }
  const name = error?.name && error.name !== 'Error' ? `${error.name}: ` : ''
  return {
    status: 'error',
    error: { code: 'run-error', message: `${name}${error?.message ?? String(error)}` },
  }
}
