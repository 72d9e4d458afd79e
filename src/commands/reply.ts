import { h, Session } from 'koishi'
import type { ToolService } from '../service'
import { ArgumentIssue, ToolResult } from '../types'
import { formatForModel } from '../pipeline/result'
import { displayParams, permissionText, say, sayPath } from '../permission/texts'

/**
 * The chat reply for a result, in the session's language: the tool's
 * `render.result` (given `args`, the arguments as the tool saw them) when
 * it has one and the call succeeded; otherwise the result text, and for a
 * failure the localized status (`[denied] …`) with refusals of the
 * permission service and errors that carry a locale text said in the
 * user's language (any other error framed in it). Without a session the
 * model text is returned. This is what `tools.call` replies; commands of
 * other plugins can use it through `ctx.tools.reply`.
 */
export function renderReply(tools: ToolService, session: Session | undefined, result: ToolResult, args?: unknown): h[] | string {
  const entry = tools.get(result.meta.tool)
  const render = entry?.definition.render?.result
  if (render && result.ok) {
    try {
      const rendered = render(args ?? {}, result)
      if (typeof rendered === 'string' || Array.isArray(rendered) || h.isElement(rendered)) return rendered as any
      if (rendered && typeof rendered === 'object') {
        return [rendered.title, rendered.text].filter(Boolean).join('\n')
      }
    } catch {}
  }
  const text = formatForModel(result)
  if (result.ok || !session) return [h.text(text)]
  // Texts said inside the reply are plain text (`say`): the reply's own text escapes them once.
  const status = say(tools.app, session, `status.${result.status}`)
  const failed = (text: string) => session.text('commands.tools.call.messages.failed', { status, text })
  // Refusals of the permission service carry their text parameters: say them in the user's language.
  const params = result.error?.params
  if (params) return failed(permissionText(tools.app, session, result.error.code, params))
  // Errors with a locale text (pipeline errors, refused paths) are said in the user's language too.
  const localized = result.error?.text
  if (localized) {
    const params = { ...localized.params }
    // Argument issues are one sentence each: their own text (unknown, missing property), else `{path}: expected {expected}, got {got}`.
    if (Array.isArray(params.issues)) {
      params.issues = params.issues.map((issue: ArgumentIssue) => (issue.text && sayPath(tools.app, session, issue.text.path, displayParams(issue.text.params ?? {})))
        ?? say(tools.app, session, 'error.issue', displayParams({
          path: issue.path || say(tools.app, session, 'error.issue-root'),
          expected: issue.expected,
          got: issue.got,
        }))).join('; ')
    }
    const said = sayPath(tools.app, session, localized.path, displayParams(params))
    if (said !== undefined) return failed(said)
  }
  // Any other error of the tool (or one whose text no locale defines): its code and English message, in a frame of the user's language.
  if (result.error) return failed(say(tools.app, session, 'error.tool-error', { code: result.error.code, message: result.error.message }))
  return failed(text)
}
