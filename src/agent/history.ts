import { ChatMessage } from './messages'

/** Most conversations kept in memory; the least recently used one is dropped beyond this. */
export const maxConversations = 1000

/**
 * Most characters of one conversation's history (texts, tool-call names
 * and arguments, reasoning): far above what 40 ordinary messages hold (tool
 * results are cut to `maxOutputLength`), low enough that a model's
 * runaway answer or megabytes of tool-call arguments are not carried into
 * every later request, nor held 1000 times in memory.
 */
export const maxHistoryCharacters = 1024 * 1024

/**
 * The conversation history of the agent (issue "Agent runner", item 3):
 * per conversation key, the messages of earlier turns (user, assistant and
 * tool messages; never the system prompt), in memory. It is bounded by
 * `limit()` messages and {@link maxHistoryCharacters} characters, and cut
 * only at the start of a turn (a user message),
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

  /**
   * Appends the messages of a finished turn (starting with its user
   * message) and trims. A turn larger than {@link maxHistoryCharacters} is
   * kept as its user message and a note saying so.
   */
  append(key: string, turn: ChatMessage[]) {
    const size = turn.reduce((sum, message) => sum + messageSize(message), 0)
    if (size > maxHistoryCharacters) turn = [turn[0], { role: 'assistant', content: `(This turn was too long to keep in the history: ${size} characters.)` }]
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
 * The most recent whole turns of `messages` that fit in `limit` messages
 * and `maxCharacters` characters ({@link messageSize}). A single turn
 * longer than that is dropped entirely (keeping half a turn would leave
 * tool messages without their call).
 */
export function trimToTurns(messages: ChatMessage[], limit: number, maxCharacters = maxHistoryCharacters): ChatMessage[] {
  if (limit <= 0) return []
  let size = 0
  let kept = messages.length
  for (let index = messages.length - 1; index >= 0 && messages.length - index <= limit; index--) {
    size += messageSize(messages[index])
    if (size > maxCharacters) break
    if (messages[index].role === 'user') kept = index
  }
  return kept === 0 ? messages : messages.slice(kept)
}

/** The characters a message carries: its text, its tool calls' names and arguments, its reasoning. */
export function messageSize(message: ChatMessage) {
  let size = message.content?.length ?? 0
  if (message.role === 'assistant') {
    size += message.reasoning_content?.length ?? 0
    for (const call of message.tool_calls ?? []) size += call.function.name.length + call.function.arguments.length
  }
  return size
}
