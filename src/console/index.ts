import { resolve } from 'path'
import { Context } from 'koishi'
import { ConsoleConfig } from './config'
import { assertConsoleAuthority } from './authority'
import { ConsolePermissions } from './permissions'
import { ConsoleViews } from './views'
import { parseAnswer, parseId, parseLimit, parseLocale, parsePattern, parsePolicy, parseScope } from './input'
import { ApprovalService, CallLogService, callLogSize, ToolTableService } from './services'
import { ActionResult, ApprovalView, CallView, ConsoleScopeInput, RuleView, ScopeReport, ToolDetail } from './types'

export * from './types'
export { ConsoleAuthorityError } from './authority'
export { ConsoleInputError } from './input'

declare module '@koishijs/console' {
  interface Events {
    /** Every active tool's verdict in a scope, and the declarations of the scope's mode. */
    'chatluna-tools/scope'(this: Client, scope: ConsoleScopeInput): ScopeReport
    /** One tool in a scope; null when no tool has that name. */
    'chatluna-tools/tool'(this: Client, name: string, scope: ConsoleScopeInput): ToolDetail | null
    /**
     * Sets a tool-name pattern's policy, or removes its stored policy with
     * null; a refusal's message is in `locale` (the page's language).
     */
    'chatluna-tools/set-policy'(this: Client, pattern: string, policy: string | null, locale?: string): Promise<ActionResult>
    'chatluna-tools/approvals'(this: Client): Promise<ApprovalView[]>
    /**
     * Answers a pending approval as the console user (the permission service
     * checks who may); the result's message is in `locale` (the page's
     * language), else in the app's default.
     */
    'chatluna-tools/answer'(this: Client, id: string, answer: string, locale?: string): Promise<ActionResult>
    'chatluna-tools/rules'(this: Client): Promise<RuleView[]>
    /** The most recent finished calls, newest first (default 100, at most 200). */
    'chatluna-tools/calls'(this: Client, limit?: number): CallView[]
  }
}

/** Names of the page's listeners, each refused below `consoleAuthority`. */
export const consoleListeners = [
  'chatluna-tools/scope',
  'chatluna-tools/tool',
  'chatluna-tools/set-policy',
  'chatluna-tools/approvals',
  'chatluna-tools/answer',
  'chatluna-tools/rules',
  'chatluna-tools/calls',
] as const

/** The page's data as the client entry receives it. */
export interface ConsoleEntryData {
  /** The authority the page needs. */
  authority: number
}

/**
 * The server side of the console page (issue "Console page"): the client
 * entry, the data services (tool table, call log, pending approvals) with
 * live updates, and the listeners of the page. Loaded only when the
 * `console` service exists. Every listener and data service needs
 * `consoleAuthority`: `@koishijs/plugin-auth` refuses lower console users
 * before the listener runs, and each listener checks again itself.
 */
export function applyConsole(ctx: Context, config: ConsoleConfig) {
  const authority = config.consoleAuthority
  const permissions = new ConsolePermissions(ctx)
  const views = new ConsoleViews(ctx, permissions)

  // `__dirname` is src/console in development and lib/console when installed.
  ctx.console.addEntry({
    dev: resolve(__dirname, '../../client/index.ts'),
    prod: resolve(__dirname, '../../dist'),
  }, ((): ConsoleEntryData => ({ authority })) as any)

  const services = { views, permissions, authority }
  ctx.plugin(ToolTableService, services)
  ctx.plugin(CallLogService, services)
  ctx.plugin(ApprovalService, services)

  const options = { authority }
  const guard = (client: object) => assertConsoleAuthority(ctx, client, authority)

  ctx.console.addListener('chatluna-tools/scope', function (input) {
    guard(this)
    const { scope, mode, locale } = parseScope(input)
    return views.scopeReport(scope, mode, locale)
  }, options)

  ctx.console.addListener('chatluna-tools/tool', function (name, input) {
    guard(this)
    const { scope, locale } = parseScope(input)
    return views.detail(parseId(name, 'name'), scope, locale) ?? null
  }, options)

  ctx.console.addListener('chatluna-tools/set-policy', async function (pattern, policy, locale) {
    const approver = guard(this)
    return permissions.setPolicy(parsePattern(pattern), parsePolicy(policy), approver, parseLocale(locale))
  }, options)

  ctx.console.addListener('chatluna-tools/approvals', async function () {
    guard(this)
    return permissions.pendingApprovals()
  }, options)

  ctx.console.addListener('chatluna-tools/answer', async function (id, answer, locale) {
    const approver = guard(this)
    return permissions.answer(parseId(id), parseAnswer(answer), approver, parseLocale(locale))
  }, options)

  ctx.console.addListener('chatluna-tools/rules', async function () {
    guard(this)
    return permissions.listRules()
  }, options)

  ctx.console.addListener('chatluna-tools/calls', function (limit) {
    guard(this)
    return views.recentCalls(parseLimit(limit, callLogSize, 200))
  }, options)
}
