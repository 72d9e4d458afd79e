import { Random } from 'koishi'
import { ToolAction, ToolCall, ToolCallLogEntry, ToolCallRequest, ToolError, ToolResult, ToolResultMeta, ToolScope, ToolStatus } from '../types'
import { RegisteredTool, ToolRegistry } from '../registry/registry'
import { closestNames } from '../registry/names'
import { VisibilityChain } from '../visibility/chain'
import { PermissionGate, PermissionVerdict } from '../permission/gate'
import { computeAction, effectOf } from '../permission/action'
import { failure, normalizeOutput } from './result'
import { emitEvent, hasListeners, Lifecycle, runAfterHooks, runBeforeHooks, snapshot } from './hooks'
import { parseArguments } from './arguments'
import { needsSpool, spoolOutput } from './spool'
import { SerialLock } from './serial'
import { RunOutcome, runTool } from './run'
import { CallRecord } from './call'

/** A random prefix per process and a counter: unique call ids without a random draw per call. */
const callIdPrefix = `call_${Random.id(6)}`
let callCounter = 0
function nextCallId() {
  return callIdPrefix + (++callCounter).toString(36)
}

function actionError(error: any): PermissionVerdict {
  return { decision: 'deny', code: 'permission-error', reason: `the permission of this call could not be computed: ${error?.message ?? error}` }
}

function gateError(error: any): PermissionVerdict {
  return { decision: 'deny', code: 'permission-error', reason: `the permission check failed: ${error?.message ?? error}` }
}

/** Forward chains longer than this are refused as loops. */
export const maxForwardDepth = 8

/** What the pipeline needs from the service. */
export interface PipelineHost {
  /** The app's event lifecycle: its listeners are the hooks. */
  lifecycle: Lifecycle
  /** Resolves names (step 1). */
  registry: ToolRegistry
  /** Judges whether the caller may see the tool (step 2). */
  visibility: VisibilityChain
  /** The permission stage (step 5), read on every call so a replaced gate applies at once. */
  gate(): PermissionGate
  /** Default run timeout in ms. */
  timeout(): number
  /** Characters of text output above which the output is spooled to a file. */
  maxOutputLength(): number
  /** Absolute directory for spooled outputs. */
  outputDir(): string
  /** Time limit of one before- or after-listener in ms. */
  hookTimeout(): number
  /**
   * Whether `tool_search` loaded the tool in the scope's conversation: the
   * model was shown it in that result, so it counts as shown even when
   * the caller's `shown` list predates the search.
   */
  loaded?(name: string, scope: ToolScope): boolean
  /** Whether a tool belongs to a mode (`tool_search`): it is not offered as a close name. */
  isModeTool?(entry: RegisteredTool): boolean
  /** Step 11: keeps a finished call in the history and tells listeners. */
  record(entry: ToolCallLogEntry, result: ToolResult): void
}

/** A call's result and the tool that answered it (none for an unknown name). */
type Executed = [ToolResult, RegisteredTool?]

interface Frame {
  depth: number
  chain: string[]
  start: number
}

/**
 * The call pipeline (DESIGN.md "The call pipeline", steps 1–11). `call`
 * never throws for a tool's fault: unknown names, bad JSON, wrong
 * arguments, refusals, hook failures, exceptions, timeouts and aborts all
 * come back as a result record with `ok: false`.
 */
export class Pipeline {
  readonly lock = new SerialLock()

  constructor(private host: PipelineHost) {}

  /**
   * Runs one call through steps 1–11 and records it (`host.record`).
   * Resolves with the result record; never rejects: a fault of the
   * pipeline itself becomes an `internal-error` record.
   */
  async call(request: ToolCallRequest): Promise<ToolResult> {
    const start = Date.now()
    let result: ToolResult
    let entry: RegisteredTool | undefined
    try {
      const executed = this.execute(request, { depth: 0, chain: [], start })
      ;[result, entry] = executed instanceof Promise ? await executed : executed
    } catch (error) {
      // A fault of the pipeline itself: still a record, never a crash of the caller.
      result = failure('error', { code: 'internal-error', message: String(error?.stack ?? error) }, this.meta(request))
    }
    result.meta.duration = Date.now() - start
    const scope = request.scope ?? {}
    this.host.record({
      id: result.meta.callId,
      tool: result.meta.tool,
      source: entry?.source,
      userId: scope.userId ?? scope.session?.userId,
      platform: scope.platform ?? scope.session?.platform,
      channelId: scope.channelId ?? scope.session?.channelId,
      agent: scope.agent,
      status: result.status,
      ok: result.ok,
      duration: result.meta.duration,
      time: start,
      error: result.error?.message,
    }, result)
    return result
  }

  /** The meta of a call's result; `duration` is filled in by `call` when the call ends. */
  private meta(request: ToolCallRequest, entry?: RegisteredTool): ToolResultMeta {
    return {
      tool: entry?.definition.name ?? (typeof request.name === 'string' ? request.name : ''),
      callId: typeof request.id === 'string' && request.id ? request.id : nextCallId(),
      source: entry?.source,
      duration: 0,
    }
  }

  /** Steps 1–3, then the rest; synchronous when every stage is (see `process`). */
  private execute(request: ToolCallRequest, frame: Frame): Executed | Promise<Executed> {
    const { registry, visibility } = this.host
    const scope: ToolScope = request.scope ?? {}
    const requested = typeof request.name === 'string' ? request.name : ''

    // 1. Resolve the name.
    const entry = registry.resolve(requested)
    if (!entry) {
      const candidates = registry.active()
        .filter((tool) => !this.host.isModeTool?.(tool) && visibility.isVisible(tool, scope))
        .map((tool) => tool.definition.name)
      const close = closestNames(requested, candidates)
      // Echo a model's megabyte-long name only in part.
      const shown = requested.length > 100 ? `${requested.slice(0, 100)}…` : requested
      return [failure('invalid', {
        code: 'unknown-tool',
        message: requested ? `There is no tool named "${shown}".` : 'The tool call has no tool name.',
        hint: close.length ? `Call one of the available tools, e.g. ${close.join(', ')}.` : 'No tools are available here.',
        text: {
          path: `chatluna-tools.error.${requested ? 'unknown-tool' : 'no-tool-name'}${close.length ? '' : '-none'}`,
          params: { name: shown, names: close.join(', ') },
        },
      }, this.meta(request))]
    }
    const meta = this.meta(request, entry)
    const name = entry.definition.name

    // 2. Visibility: a model may only call what it was shown in this scope.
    // A forwarded call needs no place in the shown list (the model was shown
    // the tool that forwards), but the target must be visible to the caller:
    // a forward is no way around a scene rule, a tool set, a policy or a
    // disabled owner.
    const hidden = frame.depth === 0 && request.shown && !request.shown.includes(name) && !this.host.loaded?.(name, scope)
    if (hidden || visibility.firstFailure(entry, scope)) {
      const from = frame.chain[frame.chain.length - 1]
      return [failure('denied', {
        code: 'not-available',
        message: from
          ? `The tool "${from}" forwards to "${name}", which is not available in this conversation.`
          : `The tool "${name}" is not available in this conversation.`,
        hint: 'Use only the tools you were given.',
        text: { path: `chatluna-tools.error.${from ? 'forward-not-available' : 'not-available'}`, params: { name, from } },
      }, meta), entry]
    }

    // 3. Parse the arguments.
    const parsed = parseArguments(request.args, entry.schema)
    if ('error' in parsed) return [failure('invalid', parsed.error, meta), entry]
    const call = new CallRecord(meta.callId, name, requested, parsed.value, scope, entry, frame.depth, frame.start, request.signal, (progress) => {
      emitEvent(this.host.lifecycle, 'chatluna/tool-progress', [progress], call.session)
      try {
        request.onProgress?.(progress)
      } catch {}
    })
    const result = this.process(call, request, frame, meta)
    if (result instanceof Promise) return result.then((value): Executed => [value, entry])
    return [result, entry]
  }

  /**
   * Step 5: computes the action and asks the gate. Synchronous when both
   * answer synchronously (the common case), so no promise is made per call.
   * Any error denies (fail closed).
   */
  private authorize(call: ToolCall): PermissionVerdict | Promise<PermissionVerdict> {
    let action: ToolAction | Promise<ToolAction>
    try {
      action = computeAction(call)
    } catch (error) {
      return actionError(error)
    }
    if (action instanceof Promise) {
      return action.then((value) => {
        call.action = value
        return this.askGate(call)
      }, actionError)
    }
    call.action = action
    return this.askGate(call)
  }

  /** Asks the gate about a call whose action is computed; a throw or a rejection denies. */
  private askGate(call: ToolCall): PermissionVerdict | Promise<PermissionVerdict> {
    try {
      const verdict = this.host.gate().authorize(call)
      return verdict instanceof Promise ? verdict.catch(gateError) : verdict
    } catch (error) {
      return gateError(error)
    }
  }

  private denied(verdict: PermissionVerdict, meta: ToolResultMeta, call: ToolCall) {
    const error: ToolError = { code: verdict.code, message: `The call was not allowed: ${verdict.reason}.` }
    if (verdict.params) error.params = verdict.params
    return failure(verdict.status ?? 'denied', error, meta, call.messages)
  }

  /**
   * Steps 4–10 for a call whose arguments are valid. Each stage goes on to
   * the next directly when it answers synchronously, so a call whose
   * permission, run and result need no waiting makes no promise here.
   */
  private process(call: CallRecord, request: ToolCallRequest, frame: Frame, meta: ToolResultMeta): ToolResult | Promise<ToolResult> {
    if (call.entry.definition.forward) return this.forward(call, request, frame, meta)
    return this.authorizeAndRun(call, request, meta)
  }

  /** Step 4: forwards to another tool, with a loop guard; without a target the tool runs itself. */
  private async forward(call: CallRecord, request: ToolCallRequest, frame: Frame, meta: ToolResultMeta): Promise<ToolResult> {
    const { definition } = call.entry
    let target: Awaited<ReturnType<typeof definition.forward>>
    try {
      target = await definition.forward(call.args, call)
    } catch (error) {
      return this.finish(call, failure('error', { code: 'forward-error', message: `Forwarding failed: ${error?.message ?? error}` }, meta, call.messages))
    }
    if (target) {
      const chain = [...frame.chain, call.name]
      if (chain.includes(target.name) || chain.length >= maxForwardDepth) {
        return this.finish(call, failure('error', {
          code: 'forward-loop',
          message: `Forwarding ${chain.join(' → ')} → ${target.name} would loop or go deeper than ${maxForwardDepth} tools.`,
        }, meta, call.messages))
      }
      const [result] = await this.execute({ ...request, name: target.name, args: target.args ?? {}, id: call.id }, { ...frame, depth: frame.depth + 1, chain })
      result.meta.forwardedFrom = call.name
      return result
    }
    if (!definition.run) {
      return this.finish(call, failure('error', { code: 'no-run', message: `The tool "${call.name}" did not forward this call and cannot run it itself.` }, meta, call.messages))
    }
    return this.authorizeAndRun(call, request, meta)
  }

  /** Step 5 (permission), then steps 6–10. */
  private authorizeAndRun(call: CallRecord, request: ToolCallRequest, meta: ToolResultMeta): ToolResult | Promise<ToolResult> {
    const pending = this.authorize(call)
    if (pending instanceof Promise) return pending.then((verdict) => this.afterVerdict(call, request, meta, verdict))
    return this.afterVerdict(call, request, meta, pending)
  }

  /** Steps 6–10 once the permission stage has answered. */
  private afterVerdict(call: CallRecord, request: ToolCallRequest, meta: ToolResultMeta, verdict: PermissionVerdict): ToolResult | Promise<ToolResult> {
    if (verdict.decision !== 'allow') return this.finish(call, this.denied(verdict, meta, call))
    if (hasListeners(this.host.lifecycle, 'chatluna/tool-before')) return this.beforeHooks(call, request, meta, verdict)
    return this.run(call, request, meta, verdict)
  }

  /** Step 6: before-hooks; changed arguments are validated and authorised again. Then steps 7–10. */
  private async beforeHooks(call: CallRecord, request: ToolCallRequest, meta: ToolResultMeta, verdict: PermissionVerdict): Promise<ToolResult> {
    const authorized = snapshot(call.args)
    const outcome = await runBeforeHooks(this.host.lifecycle, call, { timeout: this.host.hookTimeout(), signal: request.signal })
    if (outcome.aborted) {
      return this.finish(call, failure('aborted', {
        code: 'aborted',
        message: 'The call was aborted while a chatluna/tool-before hook was running.',
        text: { path: 'chatluna-tools.error.aborted' },
      }, meta, call.messages))
    }
    if (outcome.blocked) {
      const { plugin, reason, error, timeout } = outcome.blocked
      return this.finish(call, failure('denied', {
        code: timeout ? 'hook-timeout' : error ? 'hook-error' : 'blocked-by-hook',
        message: timeout
          ? `A chatluna/tool-before hook of plugin ${plugin} did not answer within ${timeout} ms, so the call was blocked.`
          : error
            ? `A chatluna/tool-before hook of plugin ${plugin} failed, so the call was blocked: ${reason}`
            : `A chatluna/tool-before hook of plugin ${plugin} blocked the call: ${reason}`,
        text: { path: `chatluna-tools.error.${timeout ? 'hook-timeout' : error ? 'hook-error' : 'blocked-by-hook'}`, params: { plugin, reason, timeout } },
      }, meta, call.messages))
    }
    // The tool gets a plain copy of what the hooks left: getters, toJSON
    // and references a hook kept cannot change it after the check.
    let args: unknown
    try {
      args = structuredClone(call.args)
    } catch (error) {
      return this.finish(call, failure('invalid', {
        code: 'invalid-arguments',
        message: `A chatluna/tool-before hook left arguments that are not plain data: ${error?.message ?? error}`,
      }, meta, call.messages))
    }
    if (snapshot(args) === authorized) {
      call.args = args
    } else {
      const reparsed = parseArguments(args, (call.entry as RegisteredTool).schema)
      if ('error' in reparsed) return this.finish(call, failure('invalid', reparsed.error, meta, call.messages))
      call.args = reparsed.value
      const pending = this.authorize(call)
      verdict = pending instanceof Promise ? await pending : pending
      if (verdict.decision !== 'allow') return this.finish(call, this.denied(verdict, meta, call))
    }
    return this.run(call, request, meta, verdict)
  }

  /** Step 7: runs the allowed call, then steps 8–10. */
  private run(call: CallRecord, request: ToolCallRequest, meta: ToolResultMeta, verdict: PermissionVerdict): ToolResult | Promise<ToolResult> {
    if (verdict.approvedBy) meta.approvedBy = verdict.approvedBy
    const traits = call.entry.definition.traits ?? {}
    const running = runTool(call, {
      timeout: traits.timeout ?? this.host.timeout(),
      parallel: traits.parallel ?? effectOf(call) === 'read',
      lock: this.lock,
      outer: request.signal,
    })
    if (running instanceof Promise) return running.then((outcome) => this.normalize(call, meta, outcome))
    return this.normalize(call, meta, running)
  }

  /** Step 8: the result record of a run, validated against the result schema; then steps 9–10. */
  private normalize(call: CallRecord, meta: ToolResultMeta, outcome: RunOutcome): ToolResult | Promise<ToolResult> {
    if (outcome.ok === false) return this.finish(call, failure(outcome.status, outcome.error, meta, call.messages))
    const output = normalizeOutput(outcome.value)
    let status: ToolStatus = output.ok ? 'success' : 'error'
    let error = output.error ?? (output.ok ? undefined : { code: 'tool-error', message: 'The tool reported a failure.' })
    const { resultSchema } = call.entry as RegisteredTool
    if (output.ok && resultSchema) {
      const checked = resultSchema.parse(outcome.value)
      if (checked.ok === false) {
        status = 'error'
        error = {
          code: 'invalid-result',
          message: `The tool returned a value that does not match its result schema: ${checked.issues.map((issue) => issue.message).join('; ')}`,
          issues: checked.issues,
        }
      }
    }
    return this.finish(call, {
      ok: status === 'success',
      status,
      content: status === 'success' || output.content.length ? output.content : [{ type: 'text', text: error.message }],
      meta: { ...output.meta, ...meta },
      messages: [...call.messages, ...output.messages],
      error,
    })
  }

  /** Steps 9–10: after-hooks, then oversized output to a file; nothing to wait for when neither applies. */
  private finish(call: CallRecord, result: ToolResult): ToolResult | Promise<ToolResult> {
    const { lifecycle, outputDir, maxOutputLength } = this.host
    if (!hasListeners(lifecycle, 'chatluna/tool-after') && !needsSpool(result, maxOutputLength())) return result
    return (async () => {
      await runAfterHooks(lifecycle, call, result, { timeout: this.host.hookTimeout() })
      await spoolOutput(result, outputDir, maxOutputLength())
      return result
    })()
  }
}
