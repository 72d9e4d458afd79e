import { ToolScope } from '../types'

/**
 * Who makes a call, in the terms rules and modes are written in (issue 3,
 * item 1): the user, their Koishi authority (0–5; no database or no user
 * record → 0), where they are, and which agent acts for them.
 */
export interface PermissionSubject {
  userId?: string
  /** Koishi `user.authority`, 0–5; 0 when unknown. */
  authority: number
  platform?: string
  guildId?: string
  channelId?: string
  /** A private (direct) chat. */
  private: boolean
  /** Id of the agent asking, if any. */
  agent?: string
  /** The agents that delegated the call to `agent`, outermost first ({@link ToolScope.delegatedBy}). */
  delegatedBy?: string[]
}

/** A finite authority 0–5 from any value; anything else counts as 0. */
export function normalizeAuthority(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.max(0, Math.min(5, Math.floor(value))) : 0
}

/** The authority of a chat user, 0–5 ({@link normalizeAuthority}); no user record (no database) counts as 0. */
export function sessionAuthority(session: { user?: unknown } | undefined): number {
  return normalizeAuthority((session?.user as any)?.authority)
}

/**
 * The subject of a scope: the scope's fields, falling back to its session
 * (`session.user.authority`, `session.isDirect`, …). A missing authority is 0.
 */
export function subjectOf(scope: ToolScope = {}): PermissionSubject {
  const session = scope.session
  return {
    userId: scope.userId ?? session?.userId,
    authority: normalizeAuthority(scope.authority ?? (session?.user as any)?.authority),
    platform: scope.platform ?? session?.platform,
    guildId: scope.guildId ?? (session?.isDirect ? undefined : session?.guildId),
    channelId: scope.channelId ?? session?.channelId,
    private: scope.private ?? !!session?.isDirect,
    agent: scope.agent,
    ...scope.delegatedBy?.length && { delegatedBy: scope.delegatedBy },
  }
}

/** The acting agent and every agent that delegated to it. */
export function agentChain(subject: Pick<PermissionSubject, 'agent' | 'delegatedBy'>): string[] {
  const chain = [...subject.delegatedBy ?? []]
  if (subject.agent) chain.push(subject.agent)
  return chain
}

/**
 * The key of `session` grants: platform, channel, user and agent. Grants
 * answered with `session` last until the plugin restarts (issue 3, item 7).
 */
export function sessionKey(subject: PermissionSubject): string {
  return JSON.stringify([subject.platform ?? '', subject.channelId ?? '', subject.userId ?? '', subject.agent ?? ''])
}

/** `platform:userId` (or `anonymous`), for prompts, audit lines and `approvedBy`. */
export function subjectLabel(subject: Pick<PermissionSubject, 'platform' | 'userId'>): string {
  if (!subject.userId) return 'anonymous'
  return subject.platform ? `${subject.platform}:${subject.userId}` : subject.userId
}
