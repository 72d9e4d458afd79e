import { Context, Random } from 'koishi'
import { ToolCall, ToolCallLogEntry, ToolCallRequest, ToolError, ToolResult, ToolResultMeta, ToolScope, ToolStatus } from '../types'
import { RegisteredTool, ToolRegistry } from '../registry/registry'
import { closestNames } from '../registry/names'
import { VisibilityChain } from '../visibility/chain'
import { PermissionGate, PermissionVerdict } from '../permission/gate'
import { computeAction, effectOf } from '../permission/action'
import { failure, normalizeOutput } from './result'
import { runAfterHooks, runBeforeHooks } from './hooks'
import { spoolOutput } from './spool'
import { SerialLock } from './serial'
import { runTool } from './run'

/** Forward chains longer than this are refused as loops. */
export const maxForwardDepth = 8

/** What the pipeline needs from the service. */
export interface PipelineHost {
  /** The context whose event listeners are the hooks (the app's root). */
  ctx: Context
  registry: ToolRegistry
  visibility: VisibilityChain
  gate(): PermissionGate
  /** Default run timeout in ms. */
  timeout(): number
  /** Characters of text output above which the output is spooled to a file. */
  maxOutputLength(): number
  /** Absolute directory for spooled outputs. */
  outputDir(): string
  record(entry: ToolCallLogEntry, result: ToolResult): void
}

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

  async call(request: ToolCallRequest): Promise<ToolResult> {
    const start = Date.now()
    let result: ToolResult
    let entry: RegisteredTool | undefined
    try {
      ;[result, entry] = await this.execute(request, { depth: 0, chain: [], start })
    } catch (error) {
      // A fault of the pipeline itself: still a record, never a crash of the caller.
      result = failure('error', { code: 'internal-error', message: String(error?.stack ?? error) }, this.meta(request, start))
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

  private meta(request: ToolCallRequest, start: number, entry?: RegisteredTool): ToolResultMeta {
    return {
      tool: entry?.definition.name ?? (typeof request.name === 'string' ? request.name : ''),
      callId: typeof request.id === 'string' && request.id ? request.id : `call_${Random.id(12)}`,
      source: entry?.source,
      duration: Date.now() - start,
    }
  }

  private async execute(request: ToolCallRequest, frame: Frame): Promise<[ToolResult, RegisteredTool?]> {
    const { registry, visibility } = this.host
    const scope: ToolScope = request.scope ?? {}
    const requested = typeof request.name === 'string' ? request.name : ''

    // 1. Resolve the name.
    const entry = registry.resolve(requested)
    if (!entry) {
      const candidates = registry.active().filter((tool) => visibility.isVisible(tool, scope)).map((tool) => tool.definition.name)
      const close = closestNames(requested, candidates)
      return [failure('invalid', {
        code: 'unknown-tool',
        message: requested ? `There is no tool named "${requested}".` : 'The tool call has no tool name.',
        hint: close.length ? `Call one of the available tools, e.g. ${close.join(', ')}.` : 'No tools are available here.',
      }, this.meta(request, frame.start))]
    }
    const meta = this.meta(request, frame.start, entry)
    const name = entry.definition.name

    // 2. Visibility: a model may only call what it was shown in this scope.
    if (frame.depth === 0) {
      const hidden = request.shown && !request.shown.includes(name)
      const verdict = hidden ? undefined : visibility.firstFailure(entry, scope)
      if (hidden || verdict) {
        return [failure('denied', {
          code: 'not-available',
          message: `The tool "${name}" is not available in this conversation.`,
          hint: 'Use only the tools you were given.',
        }, meta), entry]
      }
    }

    // 3. Parse the arguments.
    const parsed = this.parse(request.args, entry)
    if ('error' in parsed) return [failure('invalid', parsed.error, meta), entry]
    const call: ToolCall = {
      id: meta.callId,
      name,
      requestedName: requested,
      args: parsed.value,
      scope,
      session: scope.session,
      entry,
      signal: request.signal ?? new AbortController().signal,
      messages: [],
      depth: frame.depth,
      startTime: frame.start,
      progress: (event) => {
        const progress = { ...event, callId: call.id, tool: name }
        this.host.ctx.emit('chatluna/tool-progress', progress)
        try {
          request.onProgress?.(progress)
        } catch {}
      },
    }
    const result = await this.process(call, request, frame, meta)
    return [result, entry]
  }

  private parse(raw: unknown, entry: RegisteredTool): { value: unknown } | { error: ToolError } {
    let value = raw
    if (typeof raw === 'string') {
      if (!raw.trim()) {
        value = {}
      } else {
        try {
          value = JSON.parse(raw)
        } catch (error) {
          return {
            error: {
              code: 'invalid-json',
              message: `The arguments are not valid JSON: ${error.message}`,
              hint: 'Send the arguments as one complete JSON object.',
            },
          }
        }
      }
    }
    const parsed = entry.schema.parse(value)
    if (parsed.ok === false) {
      return {
        error: {
          code: 'invalid-arguments',
          message: `The arguments do not match the tool's schema: ${parsed.issues.map((issue) => issue.message).join('; ')}`,
          hint: 'Fix the listed fields and call the tool again.',
          issues: parsed.issues,
        },
      }
    }
    return { value: parsed.value }
  }

  private async authorize(call: ToolCall): Promise<PermissionVerdict> {
    try {
      call.action = await computeAction(call)
    } catch (error) {
      return { decision: 'deny', code: 'permission-error', reason: `the permission of this call could not be computed: ${error?.message ?? error}` }
    }
    try {
      return await this.host.gate().authorize(call)
    } catch (error) {
      return { decision: 'deny', code: 'permission-error', reason: `the permission check failed: ${error?.message ?? error}` }
    }
  }

  private denied(verdict: PermissionVerdict, meta: ToolResultMeta, call: ToolCall) {
    return failure(verdict.status ?? 'denied', {
      code: verdict.code,
      message: `The call was not allowed: ${verdict.reason}.`,
    }, meta, call.messages)
  }

  /** Steps 4–10 for a call whose arguments are valid. */
  private async process(call: ToolCall, request: ToolCallRequest, frame: Frame, meta: ToolResultMeta): Promise<ToolResult> {
    const entry = call.entry as RegisteredTool
    const { definition } = entry
    const finish = async (result: ToolResult) => {
      await runAfterHooks(this.host.ctx, call, result)
      await spoolOutput(result, this.host.outputDir(), this.host.maxOutputLength())
      return result
    }

    // 4. Forward to another tool, with a loop guard.
    if (definition.forward) {
      let target: Awaited<ReturnType<typeof definition.forward>>
      try {
        target = await definition.forward(call.args, call)
      } catch (error) {
        return finish(failure('error', { code: 'forward-error', message: `Forwarding failed: ${error?.message ?? error}` }, meta, call.messages))
      }
      if (target) {
        const chain = [...frame.chain, call.name]
        if (chain.includes(target.name) || chain.length >= maxForwardDepth) {
          return finish(failure('error', {
            code: 'forward-loop',
            message: `Forwarding ${chain.join(' → ')} → ${target.name} would loop or go deeper than ${maxForwardDepth} tools.`,
          }, meta, call.messages))
        }
        const [result] = await this.execute({ ...request, name: target.name, args: target.args ?? {}, id: call.id }, { ...frame, depth: frame.depth + 1, chain })
        result.meta.forwardedFrom = call.name
        return result
      }
      if (!definition.run) {
        return finish(failure('error', { code: 'no-run', message: `The tool "${call.name}" did not forward this call and cannot run it itself.` }, meta, call.messages))
      }
    }

    // 5. Permission.
    let verdict = await this.authorize(call)
    if (verdict.decision !== 'allow') return finish(this.denied(verdict, meta, call))

    // 6. Before-hooks; changed arguments are validated and authorised again.
    const outcome = await runBeforeHooks(this.host.ctx, call)
    if (outcome.blocked) {
      const { plugin, reason, error } = outcome.blocked
      return finish(failure('denied', {
        code: error ? 'hook-error' : 'blocked-by-hook',
        message: error
          ? `A chatluna/tool-before hook of plugin ${plugin} failed, so the call was blocked: ${reason}`
          : `A chatluna/tool-before hook of plugin ${plugin} blocked the call: ${reason}`,
      }, meta, call.messages))
    }
    if (outcome.changed) {
      const reparsed = this.parse(call.args, entry)
      if ('error' in reparsed) return finish(failure('invalid', reparsed.error, meta, call.messages))
      call.args = reparsed.value
      verdict = await this.authorize(call)
      if (verdict.decision !== 'allow') return finish(this.denied(verdict, meta, call))
    }
    if (verdict.approvedBy) meta.approvedBy = verdict.approvedBy

    // 7. Run.
    const traits = definition.traits ?? {}
    const outcomeOfRun = await runTool(call, {
      timeout: traits.timeout ?? this.host.timeout(),
      parallel: traits.parallel ?? effectOf(call) === 'read',
      lock: this.lock,
      outer: request.signal,
    })
    if (outcomeOfRun.ok === false) {
      return finish(failure(outcomeOfRun.status, outcomeOfRun.error, meta, call.messages))
    }

    // 8. Normalise, and validate against the result schema.
    const output = normalizeOutput(outcomeOfRun.value)
    let status: ToolStatus = output.ok ? 'success' : 'error'
    let error = output.error ?? (output.ok ? undefined : { code: 'tool-error', message: 'The tool reported a failure.' })
    if (output.ok && entry.resultSchema) {
      const checked = entry.resultSchema.parse(outcomeOfRun.value)
      if (checked.ok === false) {
        status = 'error'
        error = {
          code: 'invalid-result',
          message: `The tool returned a value that does not match its result schema: ${checked.issues.map((issue) => issue.message).join('; ')}`,
          issues: checked.issues,
        }
      }
    }
    const result: ToolResult = {
      ok: status === 'success',
      status,
      content: status === 'success' || output.content.length ? output.content : [{ type: 'text', text: error.message }],
      meta: { ...output.meta, ...meta },
      messages: [...call.messages, ...output.messages],
      error,
    }
    return finish(result)
  }
}
