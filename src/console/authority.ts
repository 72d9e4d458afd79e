import { Context } from 'koishi'
import { ConsoleApprover } from './permissions'

/** The console user `@koishijs/plugin-auth` attaches to a console client. */
export interface ConsoleAuth {
  id: number
  name?: string
  authority: number
  /** ms since epoch */
  expiredAt?: number
}

/** A console client as listeners see it (`this` of a listener). */
export interface ConsoleClientLike {
  auth?: ConsoleAuth
}

/**
 * Thrown when a console user may not use the page. The message starts with
 * the stable code `console-authority` (the page shows its own localized text
 * for it).
 */
export class ConsoleAuthorityError extends Error {
  readonly code = 'console-authority'

  constructor(message: string, public needed: number, public level?: number) {
    super(`console-authority: ${message}`)
  }
}

/**
 * Refuses a console user below `needed`. Console users get an identity only
 * from `@koishijs/plugin-auth`, whose `console/intercept` already refuses
 * listeners registered with an `authority` before they run; this check is
 * the listener's own, for any client that carries an identity:
 *
 * - a logged-in user (`client.auth`) needs `authority >= needed` and an
 *   unexpired login;
 * - when an auth service is loaded but the client has not logged in, it is
 *   refused;
 * - without any auth service the console has no identities: whoever can
 *   open it is its owner, as for Koishi's own pages (plugin config,
 *   sandbox), and passes.
 *
 * Throws `ConsoleAuthorityError`; returns the console user as an approver
 * (`console:<name>`, or `console:owner` without logins) otherwise.
 */
export function assertConsoleAuthority(ctx: Context, client: object | undefined, needed: number): ConsoleApprover {
  const auth = (client as ConsoleClientLike | undefined)?.auth
  if (auth) {
    if (typeof auth.expiredAt === 'number' && auth.expiredAt <= Date.now()) {
      throw new ConsoleAuthorityError('the console login has expired; log in again', needed, auth.authority)
    }
    const level = typeof auth.authority === 'number' ? auth.authority : 0
    if (level < needed) {
      throw new ConsoleAuthorityError(`this page needs authority ${needed}; console user "${auth.name ?? auth.id}" has authority ${level}`, needed, level)
    }
    return { platform: 'console', userId: auth.name || String(auth.id), id: auth.id, authority: level, private: true }
  }
  if (ctx.get('auth')) {
    throw new ConsoleAuthorityError(`log in to the console with a user of authority ${needed} or more`, needed)
  }
  return { platform: 'console', userId: 'owner', authority: 5, private: true }
}
