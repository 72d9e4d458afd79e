import { ToolScope } from '../types'
import { subjectOf } from '../permission/subject'

/** Conversations whose loaded tools are remembered; the least recently used is forgotten first. */
export const maxConversations = 1000
/** Tools one conversation keeps loaded; the earliest loaded is unloaded first. */
export const maxLoadedPerConversation = 50

/**
 * The conversation a scope belongs to, for tools loaded by `tool_search`:
 * platform, then the channel (or the user in a private chat), then the
 * agent. `platform:channel:<id>:<agent>` or `platform:private:<user>:<agent>`;
 * missing parts are empty, so a scope with none of them is one shared
 * conversation.
 */
export function conversationKey(scope: ToolScope): string {
  // The scope's fields, else its session's, as the permission subject reads them.
  const subject = subjectOf(scope)
  const where = subject.private ? `private:${subject.userId ?? ''}` : `channel:${subject.channelId ?? ''}`
  return `${subject.platform ?? ''}:${where}:${subject.agent ?? ''}`
}

/**
 * Tools that `tool_search` loaded, per conversation, in loading order
 * (DESIGN.md "Modes": search mode loads tools on demand). Bounded: at most
 * {@link maxConversations} conversations (least recently used forgotten
 * first) and {@link maxLoadedPerConversation} tools each (earliest loaded
 * dropped first; a tool found again moves to the end). Names only: whether
 * a loaded tool is still visible is checked on every use.
 */
export class LoadedTools {
  private conversations = new Map<string, string[]>()

  /** Marks tools loaded for a conversation; returns the conversation's loaded names. */
  load(key: string, names: readonly string[]): readonly string[] {
    const list = (this.conversations.get(key) ?? []).filter((name) => !names.includes(name))
    list.push(...names)
    if (list.length > maxLoadedPerConversation) list.splice(0, list.length - maxLoadedPerConversation)
    this.touch(key, list)
    return list
  }

  /** The tools loaded for a conversation, earliest first; marks the conversation as recently used. */
  names(key: string): readonly string[] {
    const list = this.conversations.get(key)
    if (!list) return []
    this.touch(key, list)
    return list
  }

  /** Whether a tool is loaded for a conversation (does not count as a use). */
  has(key: string, name: string) {
    return this.conversations.get(key)?.includes(name) ?? false
  }

  /** Forgets one conversation (e.g. after its history was reset). */
  forget(key: string) {
    return this.conversations.delete(key)
  }

  /** Forgets every conversation. */
  clear() {
    this.conversations.clear()
  }

  /** Number of conversations remembered. */
  get size() {
    return this.conversations.size
  }

  private touch(key: string, list: string[]) {
    this.conversations.delete(key)
    this.conversations.set(key, list)
    if (this.conversations.size > maxConversations) {
      this.conversations.delete(this.conversations.keys().next().value)
    }
  }
}
