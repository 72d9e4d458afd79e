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
  /** Set when a listener blocked the call, or threw (fail closed). */
  blocked?: { reason: string; plugin: string; error?: boolean }
  /** Whether any listener changed `call.args`. */
  changed: boolean
}

/**
 * Runs the `chatluna/tool-before` listeners in order on the mutable call
 * (DESIGN.md pipeline step 6). A listener returning a non-empty string
 * blocks the call with that reason; one that throws blocks it too (fail
 * closed). Argument changes are detected by comparing JSON snapshots.
 */
export async function runBeforeHooks(lifecycle: Lifecycle, call: ToolCall): Promise<BeforeOutcome> {
  const hooks = listeners(lifecycle, 'chatluna/tool-before', call.session)
  if (!hooks.length) return { changed: false }
  const before = snapshot(call.args)
  for (const hook of hooks) {
    try {
      const result = await hook.callback(call)
      if (typeof result === 'string' && result) {
        return { blocked: { reason: result, plugin: pluginName(hook.ctx) }, changed: snapshot(call.args) !== before }
      }
    } catch (error) {
      return {
        blocked: { reason: String(error?.message ?? error), plugin: pluginName(hook.ctx), error: true },
        changed: snapshot(call.args) !== before,
      }
    }
  }
  return { changed: snapshot(call.args) !== before }
}

/**
 * Runs the `chatluna/tool-after` listeners in order (DESIGN.md pipeline
 * step 9). They may change the result's content and messages; one that
 * throws is reported in `result.messages` and the rest still run.
 */
export async function runAfterHooks(lifecycle: Lifecycle, call: ToolCall, result: ToolResult) {
  for (const hook of listeners(lifecycle, 'chatluna/tool-after', call.session)) {
    try {
      await hook.callback(call, result)
    } catch (error) {
      result.messages.push(`an after-hook of plugin ${pluginName(hook.ctx)} failed: ${error?.message ?? error}`)
    }
  }
}

function snapshot(value: unknown) {
  try {
    return JSON.stringify(value) ?? 'undefined'
  } catch {
    // Values JSON cannot hold (cycles, BigInt) count as changed on every comparison.
    return Math.random().toString()
  }
}
