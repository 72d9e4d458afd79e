import { Random } from 'koishi'
import { ToolResult } from '../types'
import { toolNamePattern } from '../registry/names'
import { ChatToolCall, RawToolCall } from './messages'

/*
 * The loop's guards (issue "Agent runner", item 3, and its "inputs from
 * public reports"): repair of the tool calls a model sends, refusal of
 * repeated identical calls, and guidance after repeated failures. Texts
 * here are read by the model, so they are English like the pipeline's.
 */

/** Identical calls (same tool, same arguments) allowed per turn; the next one is refused. */
export const maxIdenticalCalls = 2

/** Failures in a row of one tool after which guidance is added. */
export const failureStreakLimit = 3

/** The name sent back in place of an empty tool name (strict endpoints reject `""`). */
export const missingToolName = 'missing_tool_name'

/**
 * The name a call is sent back under: the model's name when it is a legal
 * tool name, else the name with every character outside `[a-zA-Z0-9_-]`
 * replaced by `_` and cut to 64 characters ({@link missingToolName} when
 * nothing is left). Endpoints check the names of earlier calls
 * (`functions.read`, `read<|channel|>commentary` from models that leak their
 * chat template) and refuse the whole request, so one such call would break
 * every later request of the conversation.
 */
export function wireToolName(name: string) {
  if (toolNamePattern.test(name)) return name
  const legal = name.slice(0, 256).replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64)
  return /[a-zA-Z0-9]/.test(legal) ? legal : missingToolName
}

/** A generated tool-call id, for calls whose id is missing, empty or repeated. */
export function generateCallId() {
  return `call_${Random.id(24)}`
}

/**
 * Repairs the tool calls of one response so they can be executed and sent
 * back: an empty, missing or repeated id gets a generated one (reported for
 * Qwen and Gemini's compatibility endpoint: a call with `id: ""` was
 * silently dropped); an empty or illegal name is sent back in the legal
 * form {@link wireToolName} gives it;
 * arguments that are not a JSON object are sent back as `{}` because several
 * servers (Ollama, vLLM) parse the arguments of earlier calls and refuse the
 * whole request otherwise — the tool message then tells the model what was
 * wrong with what it sent. `raw` keeps what the model sent, for execution.
 */
export function repairToolCalls(calls: RawToolCall[]): { wire: ChatToolCall; raw: RawToolCall }[] {
  const seen = new Set<string>()
  return calls.map((raw) => {
    let id = raw.id
    if (!id || seen.has(id)) id = generateCallId()
    seen.add(id)
    return {
      raw: { ...raw, id },
      wire: {
        id,
        type: 'function',
        function: { name: wireToolName(raw.name), arguments: isJSONObject(raw.arguments) ? raw.arguments : '{}' },
      },
    }
  })
}

function isJSONObject(text: string) {
  if (!text.trim()) return false
  try {
    const value = JSON.parse(text)
    return !!value && typeof value === 'object' && !Array.isArray(value)
  } catch {
    return false
  }
}

/** A stable text of arguments, so `{"a":1,"b":2}` and `{"b":2,"a":1}` count as the same. */
function canonicalArguments(text: string) {
  try {
    return JSON.stringify(sortKeys(JSON.parse(text || '{}')))
  } catch {
    return text.trim()
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (!value || typeof value !== 'object') return value
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortKeys((value as any)[key])]))
}

/** The state of the guards over one turn. */
export class TurnGuards {
  private identical = new Map<string, number>()
  private streaks = new Map<string, number>()
  /** Calls refused as repetitions in this turn. */
  refusals = 0

  /**
   * Counts a call; returns the refusal text for the model when the same
   * tool was already called with the same arguments {@link maxIdenticalCalls}
   * times in this turn (the call then does not run).
   */
  repetition(call: RawToolCall): string | undefined {
    const key = `${call.name}\u0000${canonicalArguments(call.arguments)}`
    const count = (this.identical.get(key) ?? 0) + 1
    this.identical.set(key, count)
    if (count <= maxIdenticalCalls) return
    this.refusals += 1
    const name = call.name ? `"${call.name}"` : 'a tool without a name'
    return `Refused: you already called ${name} with exactly these arguments ${count - 1} times in this turn, and the results are above. `
      + 'Calling it again will not give a different result. Use what you have, try something different, or answer the user now.'
  }

  /**
   * Records a result; returns guidance when this tool has now failed
   * {@link failureStreakLimit} times in a row in this turn.
   */
  outcome(call: RawToolCall, result: ToolResult): string | undefined {
    const name = result.meta.tool || call.name
    if (result.ok) {
      this.streaks.delete(name)
      return
    }
    const streak = (this.streaks.get(name) ?? 0) + 1
    this.streaks.set(name, streak)
    if (streak < failureStreakLimit) return
    const tool = name ? `"${name}"` : 'this tool'
    return `Guidance: ${tool} has failed ${streak} times in a row. Do not retry the same approach. `
      + 'Read the errors and hints above, then change the arguments, use another tool, or explain the problem to the user.'
  }
}

/**
 * A plain sentence for the model when a call did not run because a person
 * or a rule said no, or nobody answered in time (issue "Agent runner",
 * item 4), put before the result text.
 */
export function outcomeNote(result: ToolResult): string | undefined {
  if (result.status === 'denied') {
    return 'This call was denied and did not run. Do not try to get around the refusal; tell the user it was not allowed.'
  }
  if (result.status === 'timeout') {
    return 'This call timed out: the tool, or the approval it was waiting for, did not finish in time. It did not complete.'
  }
  if (result.status === 'aborted') return 'This call was cancelled before it finished.'
}
