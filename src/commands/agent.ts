import { Context, h, Session } from 'koishi'
import { localeIds, locales } from '../locales'
import { AgentOptions } from '../agent/config'
import { AgentRunner, AgentTurn } from '../agent/runner'
import { PlannedCall } from '../agent/loop'
import { unsafeCharacters } from '../permission/texts'

/** Plain text of a chat message: elements dropped, entities decoded, trimmed. */
export function plainText(content: string) {
  return h.parse(content || '').map((element) => element.toString(true)).join('').trim()
}

/**
 * The chat side of the agent (issue "Agent runner", item 5): the command
 * `<command> <text>` (default `agent`), `<command>.clear` to forget the
 * conversation, and, when configured, replies to messages that @mention the
 * bot in groups and to every non-command message in private chats. While
 * tools run, the bot posts the model's interim text and a line naming the
 * tools (`progress`: `never`, `private` (default) or `always`).
 */
export function applyAgentCommand(ctx: Context, runner: AgentRunner, config: AgentOptions) {
  const name = config.command || 'agent'
  if (name !== 'agent') {
    // The locale files describe the command under its default name.
    for (const locale of localeIds) ctx.i18n.define(locale, { commands: { [name]: locales[locale].commands.agent } })
  }

  const respond = async (session: Session, text: string) => {
    if (!config.model) return session.text('chatluna-tools.agent.not-configured')
    const progress = config.progress === 'always' || (config.progress === 'private' && session.isDirect)
    const turn = await runner.chat(session, text, progress ? (calls, interim) => sendProgress(session, calls, interim) : undefined)
    return replyOf(session, turn)
  }

  ctx.command(`${name} <text:text>`)
    .userFields(['authority', 'locales'])
    .action(async ({ session }, text) => {
      const input = plainText(text)
      if (!input) return session.text('chatluna-tools.agent.missing-text', { command: name })
      return respond(session, input)
    })

  ctx.command(`${name}.clear`)
    .action(({ session }) => {
      const cleared = runner.history.clear(runner.conversationKey(session))
      return session.text(cleared ? 'chatluna-tools.agent.cleared' : 'chatluna-tools.agent.nothing-to-clear')
    })

  if (config.replyOnMention || config.replyInPrivate) {
    // Middlewares see the user record only for fields someone asked for.
    ctx.before('attach-user', (session, fields) => {
      fields.add('authority')
      fields.add('locales')
    })
    ctx.middleware(async (session, next) => {
      if (session.userId === session.selfId) return next()
      const wanted = session.isDirect ? config.replyInPrivate : config.replyOnMention && session.stripped.appel
      if (!wanted) return next()
      const input = plainText(session.stripped.content)
      if (!input) return next()
      return respond(session, input)
    })
  }
}

/** The reply for a finished turn, in the session's language. */
export function replyOf(session: Session, turn: AgentTurn) {
  switch (turn.status) {
    case 'answer':
    case 'stopped':
      if (turn.text.trim()) return h.text(turn.text)
      return session.text(turn.status === 'answer' ? 'chatluna-tools.agent.empty-answer' : 'chatluna-tools.agent.stopped')
    case 'max-steps': {
      const message = session.text('chatluna-tools.agent.max-steps', { steps: turn.steps })
      return turn.text.trim() ? [h.text(turn.text + '\n\n'), h.text(message)] : message
    }
    case 'error':
      return session.text(`chatluna-tools.agent.errors.${turn.error?.code ?? 'bad-response'}`, turn.error?.params ?? {})
  }
}

/** Most characters of one call's description in a progress line. */
const maxCallText = 100

/**
 * Posts the model's interim text and a line naming the tools about to run:
 * the calls a guard did not refuse, each on one line and cut to
 * {@link maxCallText} characters (a model chooses the names and arguments).
 */
async function sendProgress(session: Session, calls: PlannedCall[], interim: string | null) {
  if (interim?.trim()) await session.send(h.text(interim.trim()))
  const running = calls.filter((item) => !item.refusal)
  if (!running.length) return
  const tools = running.map(({ call }) => shortText(describeCall(session, call.name, call.arguments))).join(', ')
  await session.send(session.text('chatluna-tools.agent.progress', { tools }))
}

/** A text on one line (control characters, line breaks and bidi controls as spaces), cut to {@link maxCallText} characters. */
function shortText(text: string) {
  const line = text.slice(0, maxCallText + 1).replace(unsafeCharacters, ' ')
  return line.length > maxCallText ? line.slice(0, maxCallText - 1) + '…' : line
}

/** A short description of a call: the tool's `render.call`, else its name. */
function describeCall(session: Session, name: string, args: string) {
  if (!name) return '?'
  const entry = session.app.tools.registry.resolve(name)
  const render = entry?.definition.render?.call
  if (render) {
    try {
      const text = render(JSON.parse(args || '{}'))
      if (typeof text === 'string' && text) return text
    } catch {}
  }
  return entry?.definition.name ?? name
}
