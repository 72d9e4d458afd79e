import { Context } from 'koishi'
import { Client, DataService } from '@koishijs/console'
import { assertConsoleAuthority } from './authority'
import { ConsolePermissions } from './permissions'
import { ConsoleViews } from './views'
import { ApprovalView, CallView, ToolTable } from './types'

declare module '@koishijs/console' {
  namespace Console {
    interface Services {
      'chatluna-tools': ToolTableService
      'chatluna-tools-calls': CallLogService
      'chatluna-tools-approvals': ApprovalService
    }
  }
}

/** What the page's data services share. */
export interface ServiceOptions {
  views: ConsoleViews
  permissions: ConsolePermissions
  /** The authority a console user needs to receive the data. */
  authority: number
}

/** Calls shown in the page's log, newest first. */
export const callLogSize = 100

/** Wait before pushing a change, in ms: bursts (a plugin defining ten tools) become one push. */
const refreshDelay = 100

/**
 * A data service whose value is withheld (null) from a console user below
 * the page's authority, and whose refreshes are coalesced.
 */
abstract class GuardedService<T> extends DataService<T> {
  static inject = ['console', 'tools']

  private pending: () => void

  constructor(ctx: Context, key: 'chatluna-tools' | 'chatluna-tools-calls' | 'chatluna-tools-approvals', protected shared: ServiceOptions) {
    super(ctx, key, { authority: shared.authority })
  }

  async get(forced?: boolean, client?: Client): Promise<T> {
    try {
      assertConsoleAuthority(this.ctx, client, this.shared.authority)
    } catch {
      return null
    }
    return this.value()
  }

  protected abstract value(): Promise<T>

  /** Refreshes soon, once for a burst of changes. */
  schedule() {
    if (this.pending) return
    this.pending = this.ctx.setTimeout(() => {
      this.pending = undefined
      this.refresh()
    }, refreshDelay)
  }
}

/** `chatluna-tools`: the tool table, pushed again when tools, owners or policies change. */
export class ToolTableService extends GuardedService<ToolTable> {
  constructor(ctx: Context, options: ServiceOptions) {
    super(ctx, 'chatluna-tools', options)
    ctx.on('chatluna/tools-changed', () => this.schedule())
  }

  protected value() {
    return this.shared.views.table()
  }
}

/** `chatluna-tools-calls`: the most recent finished calls, newest first, pushed after each call. */
export class CallLogService extends GuardedService<CallView[]> {
  constructor(ctx: Context, options: ServiceOptions) {
    super(ctx, 'chatluna-tools-calls', options)
    ctx.on('chatluna/tool-call', () => this.schedule())
  }

  protected async value() {
    return this.shared.views.recentCalls(callLogSize)
  }
}

/** `chatluna-tools-approvals`: pending approvals, pushed when one is requested or answered. */
export class ApprovalService extends GuardedService<ApprovalView[]> {
  constructor(ctx: Context, options: ServiceOptions) {
    super(ctx, 'chatluna-tools-approvals', options)
    ctx.on('chatluna/approval-requested', () => this.schedule())
    ctx.on('chatluna/approval-answered', () => this.schedule())
  }

  protected async value() {
    return this.shared.permissions.pendingApprovals()
  }
}
