import { ToolAction, ToolCall, ToolEntry, ToolProgress, ToolScope } from '../types'

/**
 * An abort controller whose `AbortSignal` is only created when someone reads
 * it: most tools never do, and creating one costs microseconds per call.
 * `onAbort` hears the abort before the signal's own listeners.
 */
export class LazyAbort {
  reason: unknown
  aborted = false
  onAbort?: (reason: unknown) => void
  private controller?: AbortController

  get signal() {
    if (!this.controller) {
      this.controller = new AbortController()
      if (this.aborted) this.controller.abort(this.reason)
    }
    return this.controller.signal
  }

  abort(reason: unknown) {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    // Settle the pipeline's race before the tool's own abort listeners run.
    this.onAbort?.(reason)
    this.controller?.abort(reason)
  }
}

/**
 * The mutable record of a call in flight (the public `ToolCall`). Its
 * `signal` is the run's abort signal once the tool runs, the caller's
 * signal before, and a signal that never aborts when the caller gave none.
 */
export class CallRecord<A = any> implements ToolCall<A> {
  action?: ToolAction
  messages: string[] = []
  /** Set by the run stage; `signal` then follows it. */
  abort?: LazyAbort
  private idle?: AbortSignal

  constructor(
    public id: string,
    public name: string,
    public requestedName: string,
    public args: A,
    public scope: ToolScope,
    public entry: ToolEntry<A>,
    public depth: number,
    public startTime: number,
    private outer: AbortSignal | undefined,
    private onProgress: (event: ToolProgress, call: CallRecord) => void,
  ) {}

  get session() {
    return this.scope.session
  }

  get signal(): AbortSignal {
    if (this.abort) return this.abort.signal
    return this.outer ?? (this.idle ??= new AbortController().signal)
  }

  progress(event: Omit<ToolProgress, 'callId' | 'tool'>) {
    this.onProgress({ ...event, callId: this.id, tool: this.name }, this)
  }
}
