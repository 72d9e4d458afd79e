import { ToolAction, ToolCall, ToolEffect, ToolRisk } from '../types'

const riskRank: Record<ToolRisk, number> = { review: 1, dangerous: 2, critical: 3 }

/** The higher of two risks; undefined, and anything that is not a risk name, count as no risk. */
export function maxRisk(a?: ToolRisk, b?: ToolRisk): ToolRisk | undefined {
  if (!riskRank[a]) return riskRank[b] ? b : undefined
  if (!riskRank[b]) return a
  return riskRank[a] >= riskRank[b] ? a : b
}

/** The effect a tool declares; `exec` (the most restricted) when it declares none. */
export function effectOf(call: Pick<ToolCall, 'entry'>): ToolEffect {
  return call.entry.definition.traits?.effect ?? 'exec'
}

/**
 * The permission action of a call (tool-system seed, "permission"): the
 * definition's fixed action name, or what its `permission` function returns
 * for the current arguments; `tool:<name>` by default. The effect defaults to
 * the tool's effect; the risk is the higher of the tool's base risk and the
 * action's (a function may raise it, never lower it). Parts inherit the
 * effect and risk of the whole unless they give their own. Errors thrown by
 * a `permission` function propagate (synchronously, or as a rejected
 * promise when it is async): the pipeline then denies (fail closed).
 */
export function computeAction(call: ToolCall): ToolAction | Promise<ToolAction> {
  const { definition } = call.entry
  const permission = definition.permission
  if (typeof permission === 'function') {
    const computed = permission(call.args, call)
    if (computed instanceof Promise) return computed.then((value) => completeAction(call, value))
    return completeAction(call, computed)
  }
  return completeAction(call, { name: typeof permission === 'string' && permission ? permission : `tool:${definition.name}` })
}

function completeAction(call: ToolCall, computed: ToolAction): ToolAction {
  const { definition } = call.entry
  if (typeof computed?.name !== 'string' || !computed.name) throw new TypeError('the permission function returned no action name')
  const action: ToolAction = {
    name: computed.name,
    target: computed.target,
    verdict: computed.verdict,
    reason: computed.reason,
    effect: computed.effect ?? effectOf(call),
    risk: maxRisk(definition.traits?.risk, computed.risk),
  }
  if (computed.parts) {
    action.parts = computed.parts.map((part) => ({
      ...part,
      effect: part.effect ?? action.effect,
      risk: maxRisk(action.risk, part.risk),
    }))
    for (const part of action.parts) action.risk = maxRisk(action.risk, part.risk)
  }
  return action
}

/** The target of an action as one line of text (a path, a command, or JSON). */
export function targetText(target: ToolAction['target']): string {
  if (target === undefined || target === null) return ''
  if (typeof target === 'string') return target
  for (const key of ['path', 'command', 'url', 'cwd']) {
    if (typeof target[key] === 'string') return target[key]
  }
  try {
    return JSON.stringify(target)
  } catch {
    return String(target)
  }
}
