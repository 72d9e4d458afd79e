import { Dict } from 'koishi'
import { ToolAction, ToolRisk } from '../types'
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
export interface DecisionInputs extends MatchContext {
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

/** Text parameters of the tool's own verdict: its English `reason`, and its locale texts when it gives them (`reasonText`). */
function toolReason(part: ToolAction): Dict {
  return part.reasonText?.length ? { reason: part.reason ?? '', reasonText: part.reasonText } : { reason: part.reason ?? '' }
}

function describe(part: ToolAction, target: string) {
  return target ? `"${part.name}" on "${target}"` : `"${part.name}"`
}

/** The ask/allow/deny rules that cover a part for a subject (none when there are no rules). */
function matchingRules(part: ToolAction, subject: PermissionSubject, inputs: DecisionInputs): PermissionRule[] {
  const { rules } = inputs
  if (!rules.length) return rules as PermissionRule[]
  const matching: PermissionRule[] = []
  for (const rule of rules) {
    if (ruleAppliesTo(rule, subject, inputs) && ruleMatchesAction(rule, part, inputs.workDir, inputs.tool)) matching.push(rule)
  }
  return matching
}

function partDecision(
  part: ToolAction, target: string, effect: string, inputs: DecisionInputs, level: number, needsHuman: boolean,
  decision: Decision, code: string, reason: string, rule?: PermissionRule, extra?: Dict,
): PartDecision {
  const params: Dict = { action: part.name, target, effect, risk: part.risk ?? '', mode: inputs.mode, level, tool: inputs.tool ?? '' }
  if (extra) Object.assign(params, extra)
  return { decision, code, reason, params, rule, part, needsHuman }
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
  const needsHuman = part.risk === 'critical' || part.verdict === 'ask'
  const result = (decision: Decision, code: string, reason: string, rule?: PermissionRule, extra?: Dict): PartDecision =>
    partDecision(part, target, effect, inputs, level, needsHuman, decision, code, reason, rule, extra)

  if (part.verdict === 'deny') {
    return result('deny', 'tool-deny', part.reason || `the tool refuses ${describe(part, target)}`, undefined, toolReason(part))
  }
  if (part.risk === 'critical' && level < criticalAuthority) {
    return result('deny', 'critical-level', `${describe(part, target)} is critical and can only be requested with authority ${criticalAuthority} or higher; the caller has authority ${level}`, undefined, { needed: criticalAuthority })
  }

  const matching = matchingRules(part, subject, inputs)
  const deny = matching.find((rule) => rule.effect === 'deny')
  if (deny) return result('deny', 'rule-deny', `rule ${deny.id} denies ${describe(part, target)}`, deny, { rule: deny.id })

  const fallback = modeDefault(mode, effect, effect === 'write' && mode === 'files' && insideWorkDir(target, inputs.workDir))
  if (matching.length) {
    const candidates = matching.filter((rule) => {
      if (needsHuman && !isGrant(rule)) return false
      if (level === 0 && rule.effect === 'allow' && !isGrant(rule)) return false
      return true
    })
    const chosen = pickRule(candidates)
    if (chosen?.effect === 'allow') {
      return isGrant(chosen)
        ? result('allow', 'grant', `an approval of ${describe(part, target)} for this ${chosen.validity} allows it`, chosen, { validity: chosen.validity, rule: chosen.id })
        : result('allow', 'rule-allow', `rule ${chosen.id} allows ${describe(part, target)}`, chosen, { rule: chosen.id })
    }
    if (chosen?.effect === 'ask' && !(level === 0 && fallback.decision === 'deny')) {
      return result('ask', 'rule-ask', `rule ${chosen.id} requires a human approval of ${describe(part, target)}`, chosen, { rule: chosen.id })
    }
  }

  if (fallback.decision === 'deny') {
    return fallback.code === 'files-outside'
      ? result('deny', 'files-outside', `the permission mode "files" only allows writing inside the workspace, and ${target ? `"${target}" is outside it` : 'this action names no file in it'}`)
      : result('deny', 'mode-deny', `the permission mode "${mode}" (authority ${level}) does not allow ${effect} actions such as ${describe(part, target)}`)
  }
  if (part.risk === 'critical') return result('ask', 'critical-ask', `${describe(part, target)} is critical and always needs a human approval`)
  if (part.verdict === 'ask') return result('ask', 'tool-ask', part.reason || `the tool asks for a human approval of ${describe(part, target)}`, undefined, toolReason(part))
  if (fallback.decision === 'ask') return result('ask', 'mode-ask', `the permission mode "${mode}" asks a human before ${effect} actions such as ${describe(part, target)}`)
  if (part.risk === 'dangerous' && mode !== 'allow') {
    return result('ask', 'dangerous-ask', `${describe(part, target)} is dangerous and needs a human approval in the permission mode "${mode}"`)
  }
  if (inputs.policy?.policy === 'approval') {
    return result('ask', 'policy-approval', `the policy "${inputs.policy.pattern}" requires a human approval of tool "${inputs.tool}"`, undefined, { pattern: inputs.policy.pattern })
  }
  return result('allow', 'mode-allow', `the permission mode "${mode}" allows ${effect} actions`)
}

/** A denial of the whole action, before its parts are judged: no part decisions. */
function denyWhole(action: ToolAction, subject: PermissionSubject, inputs: DecisionInputs, code: string, reason: string, extra: Dict, rule?: PermissionRule): PermissionDecision {
  const { part, ...decision } = partDecision(action, targetText(action.target), action.effect ?? 'exec', inputs, subject.authority, false, 'deny', code, reason, rule, extra)
  return { ...decision, mode: inputs.mode, risk: action.risk, parts: [] }
}

/**
 * The decision for a whole action (issue 3, item 1): the policy
 * `disabled` and deny rules on the whole action deny first; then each part
 * is judged ({@link decidePart}); one denied part denies the whole, one
 * asking part makes the whole ask.
 */
export function decideAction(action: ToolAction, subject: PermissionSubject, inputs: DecisionInputs): PermissionDecision {
  if (inputs.policy?.policy === 'disabled') {
    return denyWhole(action, subject, inputs, 'policy-disabled', `the policy "${inputs.policy.pattern}" disables tool "${inputs.tool}"`, { pattern: inputs.policy.pattern })
  }
  let decisions: PartDecision[]
  if (action.parts?.length) {
    const deny = matchingRules(action, subject, inputs).find((rule) => rule.effect === 'deny')
    if (deny) return denyWhole(action, subject, inputs, 'rule-deny', `rule ${deny.id} denies ${describe(action, targetText(action.target))}`, { rule: deny.id }, deny)
    decisions = action.parts.map((part) => decidePart(part, subject, inputs))
  } else {
    decisions = [decidePart(action, subject, inputs)]
  }
  const chosen = decisions.length === 1 ? decisions[0]
    : decisions.find((item) => item.decision === 'deny')
      ?? decisions.find((item) => item.decision === 'ask')
      ?? decisions.find((item) => item.rule)
      ?? decisions[0]
  return {
    decision: chosen.decision,
    code: chosen.code,
    reason: chosen.reason,
    params: chosen.params,
    rule: chosen.rule,
    needsHuman: decisions.length === 1 ? chosen.needsHuman : decisions.some((item) => item.needsHuman),
    mode: inputs.mode,
    risk: action.risk,
    parts: decisions,
  }
}
