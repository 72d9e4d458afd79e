import { ChatMessage } from './messages'

/** Most conversations kept in memory; the least recently used one is dropped beyond this. */
export const maxConversations = 1000

/**
 * The conversation history of the agent (issue "Agent runner", item 3):
 * per conversation key, the messages of earlier turns (user, assistant and
 * tool messages; never the system prompt), in memory. It is bounded by
 * `limit()` messages and cut only at the start of a turn (a user message),
 * so an assistant message with tool calls is never separated from its tool
 * messages, which endpoints reject.
 */
export class ConversationHistory {
  private conversations = new Map<string, ChatMessage[]>()

  constructor(private limit: () => number) {}

  /** A copy of the messages kept for a conversation. */
  get(key: string): ChatMessage[] {
    return this.conversations.get(key)?.slice() ?? []
  }

  /** Appends the messages of a finished turn (starting with its user message) and trims. */
  append(key: string, turn: ChatMessage[]) {
    const messages = [...(this.conversations.get(key) ?? []), ...turn]
    this.conversations.delete(key)
    const kept = trimToTurns(messages, this.limit())
    if (kept.length) this.conversations.set(key, kept)
    while (this.conversations.size > maxConversations) {
      this.conversations.delete(this.conversations.keys().next().value!)
    }
  }

  /** Forgets a conversation. Returns whether there was anything to forget. */
  clear(key: string) {
    return this.conversations.delete(key)
  }

  /** Number of conversations kept. */
  get size() {
    return this.conversations.size
  }
}

/**
 * The most recent whole turns of `messages` that fit in `limit` messages.
 * A single turn longer than the limit is dropped entirely (keeping half a
 * turn would leave tool messages without their call).
 */
export function trimToTurns(messages: ChatMessage[], limit: number): ChatMessage[] {
  if (limit <= 0) return []
  if (messages.length <= limit) return messages
  for (let start = messages.length - limit; start < messages.length; start++) {
    if (messages[start].role === 'user') return messages.slice(start)
  }
  return []
}
