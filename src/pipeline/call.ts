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
 * The record of a call in flight (the public `ToolCall`). Hooks may change
 * `args` and push `messages`; what the call is and who makes it cannot be
 * changed: `id`, `name`, `requestedName`, `entry`, `depth` and
 * `startTime` are read-only (assigning throws), and `scope` is a frozen
 * copy of the caller's scope, so no listener can swap the tool or raise
 * the caller's authority between the permission check and the run. Its
 * `signal` is the run's abort signal once the tool runs, the caller's
 * signal before, and a signal that never aborts when the caller gave none.
 */
export class CallRecord<A = any> implements ToolCall<A> {
  action?: ToolAction
  messages: string[] = []
  /** Set by the run stage; `signal` then follows it. */
  abort?: LazyAbort
  private idle?: AbortSignal
  readonly #id: string
  readonly #name: string
  readonly #requestedName: string
  readonly #scope: ToolScope
  readonly #entry: ToolEntry<A>
  readonly #depth: number
  readonly #startTime: number

  constructor(
    id: string,
    name: string,
    requestedName: string,
    public args: A,
    scope: ToolScope,
    entry: ToolEntry<A>,
    depth: number,
    startTime: number,
    private outer: AbortSignal | undefined,
    private onProgress: (event: ToolProgress, call: CallRecord) => void,
  ) {
    this.#id = id
    this.#name = name
    this.#requestedName = requestedName
    this.#scope = Object.freeze({ ...scope })
    this.#entry = entry
    this.#depth = depth
    this.#startTime = startTime
  }

  get id() {
    return this.#id
  }

  get name() {
    return this.#name
  }

  get requestedName() {
    return this.#requestedName
  }

  get scope() {
    return this.#scope
  }

  get entry() {
    return this.#entry
  }

  get depth() {
    return this.#depth
  }

  get startTime() {
    return this.#startTime
  }

  get session() {
    return this.#scope.session
  }

  get signal(): AbortSignal {
    if (this.abort) return this.abort.signal
    return this.outer ?? (this.idle ??= new AbortController().signal)
  }

  progress(event: Omit<ToolProgress, 'callId' | 'tool'>) {
    this.onProgress({ ...event, callId: this.#id, tool: this.#name }, this)
  }
}
