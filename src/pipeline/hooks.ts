import { Context, Logger } from 'koishi'
import { ToolCall, ToolResult } from '../types'
import { pluginName } from '../registry/registry'

const logger = new Logger('chatluna-tools')

interface Hook {
  ctx: Context
  callback: (...args: any[]) => any
}

/** The app's event lifecycle (`ctx.lifecycle`). */
export type Lifecycle = Context['lifecycle']

/**
 * The plain lifecycle object behind `ctx.lifecycle`. Cordis hands out
 * services wrapped in a tracing proxy whose every property read allocates
 * (a shadow context and a proxy); the pipeline reads the lifecycle on every
 * call, so it keeps the unwrapped object (cordis exposes it under the
 * registered symbol `cordis.original`).
 */
export function plainLifecycle(ctx: Context): Lifecycle {
  const lifecycle = ctx.lifecycle as any
  return lifecycle[Symbol.for('cordis.original')] ?? lifecycle
}

/** Whether an event has any listener at all (before session filtering). */
export function hasListeners(lifecycle: Lifecycle, name: string) {
  return !!(lifecycle as any)._hooks[name]?.length
}

/**
 * The listeners of an event in registration order, filtered the way Koishi
 * filters them for a session (a listener registered on `ctx.platform('x')`
 * only hears calls from platform `x`).
 */
function listeners(lifecycle: Lifecycle, name: string, session?: object): Hook[] {
  const hooks: Hook[] = (lifecycle as any)._hooks[name] || []
  if (!hooks.length) return hooks
  return lifecycle.filterHooks(hooks as any, session) as any
}

/**
 * Calls the listeners of a notification event (progress, call records) the
 * way `ctx.emit` does, but without its per-call bookkeeping when nobody
 * listens. A throwing listener is logged and the others still run.
 */
export function emitEvent(lifecycle: Lifecycle, name: string, args: unknown[], session?: object) {
  if (!hasListeners(lifecycle, name)) return
  for (const hook of listeners(lifecycle, name, session)) {
    try {
      hook.callback.apply(session, args)
    } catch (error) {
      logger.warn('a %s listener of plugin %s failed: %s', name, pluginName(hook.ctx), error)
    }
  }
}

/** The outcome of the before-listeners. */
export interface BeforeOutcome {
  /**
   * Set when a listener blocked the call, threw, or did not answer within
   * the time limit (`timeout`); each blocks the call (fail closed).
   */
  blocked?: { reason: string; plugin: string; error?: boolean; timeout?: number }
  /** The caller aborted the call while a listener was running. */
  aborted?: boolean
}

/** Limits of one listener: `timeout` in ms, and the caller's signal. */
export interface HookLimits {
  timeout: number
  signal?: AbortSignal
}

class HookTimeout extends Error {}
class HookAborted extends Error {}

/**
 * Waits for what a listener returned, at most `limits.timeout` ms and no
 * longer than the caller's signal stays unaborted. A value that is not a
 * promise is returned at once. Rejects with {@link HookTimeout} or
 * {@link HookAborted}; the listener itself cannot be stopped and is left
 * to finish on its own.
 */
function bounded<T>(value: T | PromiseLike<T>, limits: HookLimits): T | Promise<T> {
  if (!value || typeof (value as any).then !== 'function') return value as T
  const { timeout, signal } = limits
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => settle(() => reject(new HookAborted()))
    const timer = setTimeout(() => settle(() => reject(new HookTimeout())), timeout)
    let done = false
    function settle(action: () => void) {
      if (done) return
      done = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      action()
    }
    if (signal?.aborted) return onAbort()
    signal?.addEventListener('abort', onAbort, { once: true })
    ;(value as PromiseLike<T>).then((result) => settle(() => resolve(result)), (error) => settle(() => reject(error)))
  })
}

/**
 * Runs the `chatluna/tool-before` listeners in order on the mutable call
 * (DESIGN.md pipeline step 6). A listener returning a non-empty string
 * blocks the call with that reason; one that throws, or that does not
 * answer within `limits.timeout` ms, blocks it too (fail closed). When the
 * caller's signal aborts while a listener runs, the outcome is `aborted`.
 * Whether the arguments changed is the pipeline's to check afterwards.
 */
export async function runBeforeHooks(lifecycle: Lifecycle, call: ToolCall, limits: HookLimits): Promise<BeforeOutcome> {
  const hooks = listeners(lifecycle, 'chatluna/tool-before', call.session)
  for (const hook of hooks) {
    try {
      const result = await bounded(hook.callback(call), limits)
      if (typeof result === 'string' && result) {
        return { blocked: { reason: result, plugin: pluginName(hook.ctx) } }
      }
    } catch (error) {
      if (error instanceof HookAborted) return { aborted: true }
      if (error instanceof HookTimeout) return { blocked: { reason: '', plugin: pluginName(hook.ctx), timeout: limits.timeout } }
      return { blocked: { reason: String(error?.message ?? error), plugin: pluginName(hook.ctx), error: true } }
    }
  }
  return {}
}

/**
 * Runs the `chatluna/tool-after` listeners in order (DESIGN.md pipeline
 * step 9). They may change the result's content and messages; one that
 * throws, or does not answer within `limits.timeout` ms, is reported in
 * `result.messages` and the rest still run.
 */
export async function runAfterHooks(lifecycle: Lifecycle, call: ToolCall, result: ToolResult, limits: HookLimits) {
  for (const hook of listeners(lifecycle, 'chatluna/tool-after', call.session)) {
    try {
      await bounded(hook.callback(call, result), { timeout: limits.timeout })
    } catch (error) {
      result.messages.push(error instanceof HookTimeout
        ? `an after-hook of plugin ${pluginName(hook.ctx)} did not answer within ${limits.timeout} ms`
        : `an after-hook of plugin ${pluginName(hook.ctx)} failed: ${error?.message ?? error}`)
    }
  }
}

/**
 * The arguments as JSON text, to tell whether they changed. Values JSON
 * cannot hold (cycles, BigInt) give a text that never equals another, so
 * they count as changed on every comparison.
 */
export function snapshot(value: unknown) {
  try {
    return JSON.stringify(value) ?? 'undefined'
  } catch {
    return Math.random().toString()
  }
}
