import { Awaitable, Context, Dict, Element, Schema, Session } from 'koishi'

/**
 * What a tool does to the world. The permission stage uses it as a quick
 * pre-check when no explicit rule matches: `read` may pass, `write` depends
 * on the permission mode, `exec` is the most restricted (tool-system seed,
 * "traits"; DESIGN.md "Permissions").
 */
export type ToolEffect = 'read' | 'write' | 'exec'

/** How much care a call needs before it runs (DESIGN.md "Permissions"). */
export type ToolRisk = 'review' | 'dangerous' | 'critical'

/**
 * Where a tool comes from. Sources carry priorities, highest first:
 * `builtin` > `plugin` > `agent` > `mcp` (DESIGN.md "ToolDefinition").
 */
export type ToolSource = 'builtin' | 'plugin' | 'agent' | 'mcp'

/** Priority of each source: a larger number shadows a smaller one. */
export const sourcePriority: Record<ToolSource, number> = {
  builtin: 4,
  plugin: 3,
  agent: 2,
  mcp: 1,
}

/** Behaviour traits of a tool (tool-system seed, "traits"). */
export interface ToolTraits {
  /**
   * Whether the tool may overlap other calls. Tools with `parallel: false`
   * never overlap each other. Default: `true` for `read` tools, otherwise `false`.
   */
  parallel?: boolean
  /** What the tool does; default `exec` (the most restricted). */
  effect?: ToolEffect
  /** Base risk of every call; a `permission` function may raise it. */
  risk?: ToolRisk
  /** Synchronous wait limit in ms; default from the config (180000). */
  timeout?: number
  /** Whether a call that times out continues in the background (later issue). */
  background?: boolean
  /** Whether the tool is loaded on demand in search mode. */
  deferred?: boolean
}

/**
 * A permission action: what a call would do, in the words the permission
 * service and an approver read. `target` is a path, a command line, or a
 * small record such as `{ path }` or `{ cwd }` (tool-system seed, "permission").
 * A compound action lists its `parts` (e.g. each command of one shell line).
 */
export interface ToolAction {
  name: string
  target?: string | Dict
  risk?: ToolRisk
  effect?: ToolEffect
  parts?: ToolAction[]
  /**
   * The tool's own judgement of this action or part, which no rule can
   * lift: `deny` (e.g. a command on bash's deny list) or `ask` (e.g. a
   * command line that cannot be judged statically: a human must approve).
   */
  verdict?: 'ask' | 'deny'
  /** Why the tool gave its verdict, shown to the model and to approvers. */
  reason?: string
  /**
   * `reason` in the words of each chat user: locale texts said in the
   * user's language, joined, where chat replies and approval prompts show
   * the tool's reason (`src/permission/texts.ts`). Without it they show
   * `reason` as it is.
   */
  reasonText?: ToolReasonText[]
}

/**
 * A reason as a locale text: the i18n `path` of the text (e.g.
 * `chatluna-tools.shell.eval`, defined in both locale files of the plugin
 * that gives it) and the `params` that fill it. Values a caller or a model
 * chose (a command, a path) are shown on one line.
 */
export interface ToolReasonText {
  path: string
  params?: Dict
}

/** A fixed action name, or a function that computes the action from the arguments. */
export type ToolPermission<A = any> = string | ((args: A, call: ToolCall<A>) => Awaitable<ToolAction>)

/** Where a call is made: who, where, which agent. Every field is optional. */
export interface ToolScope {
  /** The Koishi session, when the call comes from chat. */
  session?: Session
  platform?: string
  guildId?: string
  channelId?: string
  userId?: string
  /** Private (direct) chat. */
  private?: boolean
  /** Koishi authority level 0–5; a missing user counts as 0. */
  authority?: number
  /** Id of the agent asking. */
  agent?: string
  /**
   * The agents that delegated this call to `agent`, outermost first (a
   * sub-agent's callers). Their modes, deny and ask rules still apply: a
   * sub-agent never has more rights than the agent that called it.
   */
  delegatedBy?: string[]
  /** The tool set of the agent or engine asking (visibility layer 2); glob patterns. */
  tools?: ToolSet
  /** Locale for descriptions, e.g. `zh-CN`. */
  locale?: string
  /**
   * The agent turn a call belongs to (one user message up to the final
   * answer), for approvals valid for a `turn`.
   */
  turn?: string
  /**
   * Where approval requests go when the call has no chat session (e.g. a
   * call from an MCP client): a channel of a bot on `platform`.
   */
  approvalChannel?: { platform: string; channelId: string; guildId?: string; selfId?: string }
}

/** Include / exclude glob patterns (`src/visibility/glob.ts`). An empty or missing include list includes everything. */
export interface ToolSet {
  include?: string[]
  exclude?: string[]
  /** A set the tool must pass as well: the caller's set, when a sub-agent's own set lies inside it. */
  within?: ToolSet
}

/** The caller a `describe` function sees. */
export interface ToolCaller {
  scope: ToolScope
  locale?: string
}

/** A block of a tool result. */
export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; data?: string; url?: string; mimeType: string }
  | { type: 'file'; path?: string; url?: string; name?: string; mimeType?: string; size?: number }
  | { type: 'audio'; data?: string; url?: string; mimeType: string }
  | { type: 'resource'; uri: string; text?: string; mimeType?: string; name?: string; description?: string }

/**
 * What `run` may return: a string, a list of content blocks, a structured
 * output, or any JSON value (rendered as JSON text).
 */
export type ToolRunOutput =
  | string
  | ContentBlock[]
  | ToolOutput
  | unknown

/** A structured output from `run`. */
export interface ToolOutput {
  content: ContentBlock[]
  /** Set to false to report a failure the tool handled itself. */
  ok?: boolean
  error?: ToolError
  messages?: string[]
  meta?: Dict
}

/** Status of a finished call. */
export type ToolStatus = 'success' | 'error' | 'invalid' | 'denied' | 'timeout' | 'aborted' | 'background'

/** A structured error the model can correct from. */
export interface ToolError {
  /** Stable machine-readable code such as `invalid-arguments` or `unknown-tool`. */
  code: string
  message: string
  hint?: string
  /** For `invalid`: one entry per wrong field. */
  issues?: ArgumentIssue[]
  /**
   * For permission refusals: the values that fill the chat text
   * `chatluna-tools.permission.<code>` (action, target, mode, level, …).
   */
  params?: Dict
  /**
   * The error as a locale text for chat users (`ctx.tools.reply`);
   * `message` stays the English sentence a model reads.
   */
  text?: ToolReasonText
}

/** One problem with an argument: where, what was expected, what came. */
export interface ArgumentIssue {
  /** JSON pointer-like dotted path, `''` for the whole object. */
  path: string
  expected: string
  got: string
  message: string
  /** The issue as a locale text for chat users, where it has one (an unknown or a missing property). */
  text?: ToolReasonText
}

/** Metadata of a result record. */
export interface ToolResultMeta extends Dict {
  tool: string
  callId: string
  source?: ToolSource
  /** Wall time of the whole pipeline in ms. */
  duration: number
  truncated?: boolean
  /** Set when the full output was written to a file. */
  spooled?: { path: string; size: number }
}

/** The normalised record of one call (DESIGN.md pipeline step 8). */
export interface ToolResult {
  ok: boolean
  status: ToolStatus
  content: ContentBlock[]
  meta: ToolResultMeta
  messages: string[]
  error?: ToolError
}

/** A forwarded call: another tool with other arguments. */
export interface ToolForward {
  name: string
  args?: unknown
}

/** Presentation of calls and results in chat and in the console. */
export interface ToolRender<A = any> {
  /** A short line describing the call, e.g. `read notes.txt`. */
  call?: (args: A) => string
  /** The chat reply for a result; an object gives a title (and optional text). */
  result?: (args: A, result: ToolResult) => string | Element | Element[] | { kind?: string; title?: string; text?: string }
}

/** A JSON Schema object (draft-07). */
export type JSONSchema = Dict

/** Who owns a tool besides its plugin: visibility layer 5 asks whether the owner is enabled. */
export interface ToolOwner {
  kind: 'skill' | 'mcp' | string
  id: string
}

/**
 * A tool as a plugin defines it (tool-system seed, "定义"). `args` is a
 * Schemastery schema; tools from MCP servers give `parameters` (JSON Schema)
 * instead.
 */
export interface ToolDefinition<A = any, R = any> {
  /** The name the model sees: `^[a-zA-Z0-9_-]{1,64}$`. */
  name: string
  /** What the model reads to decide when to call the tool. */
  description: string
  /** The argument schema. */
  args?: Schema<any, A>
  /** A JSON Schema for the arguments, used when `args` is absent (MCP tools). */
  parameters?: JSONSchema
  /** Optional schema the value returned by `run` must satisfy. */
  result?: Schema<any, R>
  traits?: ToolTraits
  permission?: ToolPermission<A>
  forward?: (args: A, call: ToolCall<A>) => Awaitable<ToolForward | undefined | void>
  run?: (args: A, call: ToolCall<A>) => Awaitable<ToolRunOutput>
  render?: ToolRender<A>
  /** A dynamic description for this caller; replaces `description` in the declarations. */
  describe?: (caller: ToolCaller) => string | undefined
  /** Visibility layer 1: hides the tool from scopes it returns false for. */
  filter?: (scope: ToolScope) => boolean
  /** Visibility layer 5: the skill or MCP server that owns the tool. */
  owner?: ToolOwner
  /** Hints about the tool's behaviour for clients (MCP tool annotations); never trusted for permissions. */
  annotations?: ToolAnnotations
}

/**
 * Hints about a tool, as MCP carries them (`title`, `readOnlyHint`,
 * `destructiveHint`, `idempotentHint`, `openWorldHint`). Tools from MCP
 * servers keep the server's; tools served over MCP send them to clients.
 */
export interface ToolAnnotations {
  title?: string
  readOnlyHint?: boolean
  destructiveHint?: boolean
  idempotentHint?: boolean
  openWorldHint?: boolean
}

/** Options of `ctx.tools.define`. */
export interface DefineOptions {
  /** Default `plugin`. */
  source?: ToolSource
}

/**
 * A registered tool: the definition plus where it came from. `ctx` is the
 * context of the plugin that defined it.
 */
export interface ToolEntry<A = any> {
  definition: ToolDefinition<A>
  source: ToolSource
  /** The defining plugin's name, for explanations and the console. */
  plugin: string
  ctx: Context
  /** Registration order, for "first registered wins". */
  order: number
}

/** A request to run one call through the pipeline. */
export interface ToolCallRequest {
  /** Tool name as the model gave it. */
  name: string
  /** Arguments: a JSON string or an object. */
  args?: unknown
  /** Tool-call id from the model; generated when absent or empty. */
  id?: string
  scope?: ToolScope
  signal?: AbortSignal
  /** Progress events of the running tool. */
  onProgress?: (event: ToolProgress) => void
  /** Names the model was shown; default: every tool visible in the scope. */
  shown?: string[]
}

/** A progress event of a running call. */
export interface ToolProgress {
  callId: string
  tool: string
  /** Free-form progress: a line of output, a percentage, a stage. */
  message?: string
  progress?: number
  total?: number
  data?: unknown
}

/**
 * The mutable record of a call in flight. `chatluna/tool-before` listeners
 * may change `args`; the pipeline then validates and authorises them again.
 */
export interface ToolCall<A = any> {
  readonly id: string
  /** The resolved tool name. */
  readonly name: string
  /** The name the model asked for. */
  readonly requestedName: string
  /** The arguments; a `chatluna/tool-before` listener may replace or change them (they are checked again). */
  args: A
  /** Who calls, frozen for the life of the call. */
  readonly scope: Readonly<ToolScope>
  readonly session?: Session
  readonly entry: ToolEntry<A>
  readonly signal: AbortSignal
  /** The permission action computed for the current args. */
  action?: ToolAction
  /** Notes from hooks and the pipeline, returned with the result. */
  messages: string[]
  /** Forward depth; 0 for a call from the model. */
  readonly depth: number
  /** Start time (ms since epoch). */
  readonly startTime: number
  /** Emit a progress event. */
  progress(event: Omit<ToolProgress, 'callId' | 'tool'>): void
}

/** A finished call as the log keeps it. */
export interface ToolCallLogEntry {
  id: string
  tool: string
  source?: ToolSource
  userId?: string
  platform?: string
  channelId?: string
  agent?: string
  status: ToolStatus
  ok: boolean
  duration: number
  time: number
  error?: string
}
