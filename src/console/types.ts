import { Dict } from 'koishi'
import { JSONSchema, ToolCallLogEntry, ToolEffect, ToolRisk, ToolSource } from '../types'
import { ToolPolicy } from '../permission/policy'

// The shapes the console page receives. Everything here is plain JSON: the
// page runs in a browser and gets these through the console's WebSocket.

/** Where a policy shown in the console comes from. */
export type PolicyOrigin = 'config' | 'stored'

/** A policy row: a tool-name pattern and its policy. */
export interface PolicyView {
  pattern: string
  policy: ToolPolicy
  /**
   * `config`: the plugin's config (edit it there); `stored`: set at run
   * time (from this page, a command or the API), taking precedence.
   */
  origin: PolicyOrigin
  /** Who set a stored policy, when known. */
  updatedBy?: string
}

/** One registered tool entry; several share a name when one shadows the others. */
export interface ToolRow {
  name: string
  /** Whether this entry is the active one for its name. */
  active: boolean
  source: ToolSource
  /** The defining plugin's name. */
  plugin: string
  description: string
  effect: ToolEffect
  risk?: ToolRisk
  parallel: boolean
  /** Time limit of one call in ms. */
  timeout: number
  background: boolean
  /** Loaded on demand in search mode (`traits.deferred`, or a name matching the `deferred` patterns). */
  deferred: boolean
  /** Part of a mode (`tool_search`), not a tool to choose: `tools` and `list` leave it out. */
  modeTool: boolean
  /** The skill or MCP server that owns the tool, and whether it is enabled (visibility layer 5). */
  owner?: { kind: string; id: string; enabled: boolean }
  /** For an inactive entry: the active entry that shadows it. */
  shadowedBy?: { source: ToolSource; plugin: string; reason: 'priority' | 'duplicate' }
  /** The policy that applies to the name, with the pattern that gave it. */
  policy?: { policy: ToolPolicy; pattern: string }
}

/** What the page can offer, depending on the services loaded. */
export interface ConsoleFeatures {
  /** Stored policies and rules survive a restart (a database is loaded). */
  persistentPolicies: boolean
  /** Modes `declarations` accepts, e.g. `['auto', 'native', 'search']`. */
  modes: string[]
  /** The config's mode, used when the page names none. */
  defaultMode: string
}

/** The tool table pushed to the page (data service `chatluna-tools`). */
export interface ToolTable {
  tools: ToolRow[]
  policies: PolicyView[]
  features: ConsoleFeatures
  /** Platforms of the running bots and of the scene rules, for the scope bar. */
  platforms: string[]
  /** Labels of the configured scene rules. */
  scenes: string[]
}

/**
 * The scope the page asks about, as the scope bar sets it. Every field is
 * optional; `kind` is `group` unless `private`.
 */
export interface ConsoleScopeInput {
  platform?: string
  kind?: 'group' | 'private'
  guildId?: string
  channelId?: string
  userId?: string
  /** Koishi authority 0–5. */
  authority?: number
  agent?: string
  /** The agent's tool set (visibility layer 2), glob patterns. */
  include?: string[]
  exclude?: string[]
  /** Declarations mode; default: the config's `mode`. */
  mode?: string
  /** The page's locale for texts rendered on the server. */
  locale?: string
}

/** Why a layer removed a tool, as codes and as a sentence in the page's locale. */
export interface RemovalView {
  layer: string
  code: string
  params: Dict
  /** E.g. "layer 3: the scene rules". */
  layerText: string
  /** E.g. `Scene rule "no-bash-in-groups" hides tools matching "bash" here.` */
  text: string
}

/** The permission stage's decision for a tool in a scope, before any argument is known. */
export interface DecisionView {
  decision: 'allow' | 'ask' | 'deny'
  code: string
  reason: string
  /** The reason in the page's locale, when the plugin has a text for `code`. */
  text?: string
  /** The permission mode of the scope, when the permission service has modes. */
  mode?: string
}

/** One tool's verdict in a scope. */
export interface ScopeVerdict {
  visible: boolean
  removedBy?: RemovalView
  decision?: DecisionView
}

/** Exactly what the model is shown in a scope and mode. */
export interface DeclarationsView {
  /** The mode asked for (`auto` included). */
  mode: string
  /** The concrete mode used (`native` or `search` for `auto`). */
  resolved: string
  dialect: string
  count: number
  /** UTF-8 bytes of the JSON the model receives. */
  bytes: number
  /** Each declaration's name and UTF-8 bytes. */
  items: { name: string; bytes: number }[]
  /** The declarations, pretty-printed JSON. */
  json: string
  /** Set when the mode could not build declarations. */
  error?: string
}

/** Listener `chatluna-tools/scope`: every active tool's verdict in a scope, and the declarations. */
export interface ScopeReport {
  tools: Dict<ScopeVerdict>
  declarations: DeclarationsView
}

/** One layer's verdict in a tool's detail. */
export interface LayerView {
  layer: string
  layerText: string
  passed: boolean
  code?: string
  text?: string
}

/** Listener `chatluna-tools/tool`: everything about one tool in a scope. */
export interface ToolDetail {
  row: ToolRow
  /** The description the model sees in this scope (`describe` may change it). */
  description: string
  /** The Schemastery schema as JSON (what Koishi's `k-form` renders), or null for MCP tools. */
  schema: unknown
  jsonSchema: JSONSchema
  /** A fixed permission action name, or `computed` when a function computes it from the arguments. */
  permission: string
  /** The explanation as sentences in the page's locale. */
  lines: string[]
  layers: LayerView[]
  verdict: ScopeVerdict
}

/** A pending approval as the page shows it. */
export interface ApprovalView {
  id: string
  tool?: string
  action?: string
  target?: string
  risk?: string
  /** Why it asks, in English (as the model and the logs read it). */
  reason?: string
  /** Why it asks, per page language (`zh-CN`, `en-US`), as the chat prompt says it. */
  why?: Dict<string>
  /** Only a human can allow it; `always`/`never` count as `once`/`reject`. */
  critical?: boolean
  userId?: string
  /** The requester's display name. */
  userName?: string
  platform?: string
  channelId?: string
  /** ms since epoch */
  createdAt?: number
  expiresAt?: number
  /** The parts of a compound action (e.g. the commands of one shell line), each with its decision; absent for a simple action. */
  parts?: { action: string; target: string; decision: 'allow' | 'ask' | 'deny' }[]
}

/** A permission rule as the page shows it (fields as the permission service gives them). */
export type RuleView = Dict

/** A finished call in the log. */
export type CallView = ToolCallLogEntry

/** The result of a page action. */
export interface ActionResult {
  ok: boolean
  code: string
  message?: string
}
