import { Context } from 'koishi'
import { ToolCall, ToolResult } from '../types'
import { pluginName } from '../registry/registry'

interface Hook {
  ctx: Context
  callback: (...args: any[]) => any
}

/**
 * The listeners of an event in registration order, filtered the way Koishi
 * filters them for a session (a listener registered on `ctx.platform('x')`
 * only hears calls from platform `x`).
 */
function listeners(ctx: Context, name: string, call: ToolCall): Hook[] {
  const lifecycle = ctx.lifecycle as any
  const hooks: Hook[] = lifecycle._hooks[name] || []
  if (!hooks.length) return hooks
  return lifecycle.filterHooks(hooks, call.session)
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
export async function runBeforeHooks(ctx: Context, call: ToolCall): Promise<BeforeOutcome> {
  const hooks = listeners(ctx, 'chatluna/tool-before', call)
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
export async function runAfterHooks(ctx: Context, call: ToolCall, result: ToolResult) {
  for (const hook of listeners(ctx, 'chatluna/tool-after', call)) {
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
