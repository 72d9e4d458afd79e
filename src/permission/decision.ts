import { Dict } from 'koishi'
import { ToolAction, ToolRisk } from '../types'
import { actionParts } from './gate'
import { targetText } from './action'
import { modeDefault, PermissionMode } from './modes'
import { PolicyMatch } from './policy'
import { insideWorkDir, MatchContext, PermissionRule, ruleAppliesTo, ruleMatchesAction, ruleSpecificity } from './rules'
import { PermissionSubject } from './subject'

/** The answer of the decision: run, ask a human, or refuse. */
export type Decision = 'allow' | 'ask' | 'deny'

/** Authority needed to even request a `critical` action (issue 3, item 4). */
export const criticalAuthority = 3

/**
 * The decision for one action or part. `code` is stable (`rule-deny`,
 * `mode-deny`, `critical-ask`, …); `reason` is an English sentence for the
 * model; `params` fill the chat text `chatluna-tools.permission.<code>`.
 */
export interface PartDecision {
  decision: Decision
  code: string
  reason: string
  params: Dict
  /** The rule that decided, if one did. */
  rule?: PermissionRule
  part: ToolAction
  /** Critical, or the tool's own `ask` verdict: only a human (or an approval grant) can allow it. */
  needsHuman: boolean
}

/** The decision for a whole call: the first denying part, else the first asking part, else allow. */
export interface PermissionDecision extends Omit<PartDecision, 'part'> {
  /** The mode the subject had. */
  mode: PermissionMode
  /** The highest risk of the action. */
  risk?: ToolRisk
  parts: PartDecision[]
}

/** Everything the decision reads besides the action and the subject. */
export interface DecisionInputs extends Omit<MatchContext, 'subject'> {
  rules: readonly PermissionRule[]
  mode: PermissionMode
  /** The tool's policy, when one matches its name. */
  policy?: PolicyMatch
  /** The tool name, for policy texts. */
  tool?: string
}

/** Whether a rule is a grant from an approval answer (`once`/`turn`/`session` of that exact action). */
export function isGrant(rule: PermissionRule) {
  return rule.source === 'approval' && rule.exact && rule.effect === 'allow' && rule.validity !== 'until' && rule.validity !== 'permanent'
}

/**
 * Picks the deciding ask/allow rule (issue 3, item 1): rules are walked
 * from the least to the most specific and the last one wins, unless a
 * `final` rule is reached first — it stops the walk, so more specific
 * rules cannot override it. On equal specificity `ask` beats `allow`.
 */
export function pickRule(rules: PermissionRule[]): PermissionRule | undefined {
  const sorted = rules.slice().sort((a, b) => ruleSpecificity(a) - ruleSpecificity(b)
    || (a.effect === b.effect ? 0 : a.effect === 'allow' ? -1 : 1)
    || a.createdAt - b.createdAt)
  let chosen: PermissionRule | undefined
  for (const rule of sorted) {
    chosen = rule
    if (rule.final) break
  }
  return chosen
}

function describe(part: ToolAction) {
  const target = targetText(part.target)
  return target ? `"${part.name}" on "${target}"` : `"${part.name}"`
}

/**
 * Judges one part (issue 3, items 1–5): the tool's `deny` verdict; a
 * `critical` part below level 3; deny rules; ask/allow rules (permanent
 * allow rules skip `critical` and tool-`ask` parts, approval grants do not;
 * level 0 is never raised by a rule); then the mode's default for the
 * effect, where `critical` and tool-`ask` parts ask, `dangerous` parts ask
 * outside `allow` mode, and the policy `approval` turns allow into ask.
 */
export function decidePart(part: ToolAction, subject: PermissionSubject, inputs: DecisionInputs): PartDecision {
  const effect = part.effect ?? 'exec'
  const target = targetText(part.target)
  const level = subject.authority
  const { mode } = inputs
  const params: Dict = { action: part.name, target, effect, risk: part.risk ?? '', mode, level, tool: inputs.tool ?? '' }
  const what = describe(part)
  const needsHuman = part.risk === 'critical' || part.verdict === 'ask'
  const result = (decision: Decision, code: string, reason: string, rule?: PermissionRule, extra: Dict = {}): PartDecision =>
    ({ decision, code, reason, params: { ...params, ...extra }, rule, part, needsHuman })

  if (part.verdict === 'deny') {
    return result('deny', 'tool-deny', part.reason || `the tool refuses ${what}`, undefined, { reason: part.reason ?? '' })
  }
  if (part.risk === 'critical' && level < criticalAuthority) {
    return result('deny', 'critical-level', `${what} is critical and can only be requested with authority ${criticalAuthority} or higher; the caller has authority ${level}`, undefined, { needed: criticalAuthority })
  }

  const context: MatchContext = { ...inputs, subject }
  const matching = inputs.rules.filter((rule) => ruleAppliesTo(rule, context) && ruleMatchesAction(rule, part, inputs.workDir))
  const deny = matching.find((rule) => rule.effect === 'deny')
  if (deny) return result('deny', 'rule-deny', `rule ${deny.id} denies ${what}`, deny, { rule: deny.id })

  const fallback = modeDefault(mode, effect, effect === 'write' && insideWorkDir(target, inputs.workDir))
  const candidates = matching.filter((rule) => {
    if (needsHuman && !isGrant(rule)) return false
    if (level === 0 && rule.effect === 'allow' && !isGrant(rule)) return false
    return true
  })
  const chosen = pickRule(candidates)
  if (chosen?.effect === 'allow') {
    return isGrant(chosen)
      ? result('allow', 'grant', `an approval of ${what} for this ${chosen.validity} allows it`, chosen, { validity: chosen.validity, rule: chosen.id })
      : result('allow', 'rule-allow', `rule ${chosen.id} allows ${what}`, chosen, { rule: chosen.id })
  }
  if (chosen?.effect === 'ask' && !(level === 0 && fallback.decision === 'deny')) {
    return result('ask', 'rule-ask', `rule ${chosen.id} requires a human approval of ${what}`, chosen, { rule: chosen.id })
  }

  if (fallback.decision === 'deny') {
    return fallback.code === 'files-outside'
      ? result('deny', 'files-outside', `the permission mode "files" only allows writing inside the workspace, and ${target ? `"${target}" is outside it` : 'this action names no file in it'}`)
      : result('deny', 'mode-deny', `the permission mode "${mode}" (authority ${level}) does not allow ${effect} actions such as ${what}`)
  }
  if (part.risk === 'critical') return result('ask', 'critical-ask', `${what} is critical and always needs a human approval`)
  if (part.verdict === 'ask') return result('ask', 'tool-ask', part.reason || `the tool asks for a human approval of ${what}`, undefined, { reason: part.reason ?? '' })
  if (fallback.decision === 'ask') return result('ask', 'mode-ask', `the permission mode "${mode}" asks a human before ${effect} actions such as ${what}`)
  if (part.risk === 'dangerous' && mode !== 'allow') {
    return result('ask', 'dangerous-ask', `${what} is dangerous and needs a human approval in the permission mode "${mode}"`)
  }
  if (inputs.policy?.policy === 'approval') {
    return result('ask', 'policy-approval', `the policy "${inputs.policy.pattern}" requires a human approval of tool "${inputs.tool}"`, undefined, { pattern: inputs.policy.pattern })
  }
  return result('allow', 'mode-allow', `the permission mode "${mode}" allows ${effect} actions`)
}

/**
 * The decision for a whole action (issue 3, item 1): the policy
 * `disabled` and deny rules on the whole action deny first; then each part
 * is judged ({@link decidePart}); one denied part denies the whole, one
 * asking part makes the whole ask.
 */
export function decideAction(action: ToolAction, subject: PermissionSubject, inputs: DecisionInputs): PermissionDecision {
  const common = { mode: inputs.mode, risk: action.risk }
  const base: Dict = { action: action.name, target: targetText(action.target), mode: inputs.mode, level: subject.authority, tool: inputs.tool ?? '', effect: action.effect ?? 'exec', risk: action.risk ?? '' }
  if (inputs.policy?.policy === 'disabled') {
    return {
      ...common,
      decision: 'deny',
      code: 'policy-disabled',
      reason: `the policy "${inputs.policy.pattern}" disables tool "${inputs.tool}"`,
      params: { ...base, pattern: inputs.policy.pattern },
      needsHuman: false,
      parts: [],
    }
  }
  const parts = actionParts(action)
  if (action.parts?.length) {
    const context: MatchContext = { ...inputs, subject }
    const deny = inputs.rules.find((rule) => rule.effect === 'deny' && ruleAppliesTo(rule, context) && ruleMatchesAction(rule, action, inputs.workDir))
    if (deny) {
      return { ...common, decision: 'deny', code: 'rule-deny', reason: `rule ${deny.id} denies ${describe(action)}`, params: { ...base, rule: deny.id }, rule: deny, needsHuman: false, parts: [] }
    }
  }
  const decisions = parts.map((part) => decidePart(part, subject, inputs))
  const chosen = decisions.find((item) => item.decision === 'deny')
    ?? decisions.find((item) => item.decision === 'ask')
    ?? decisions.find((item) => item.rule)
    ?? decisions[0]
  const { part: _, ...rest } = chosen
  return { ...rest, ...common, needsHuman: decisions.some((item) => item.needsHuman), parts: decisions }
}
